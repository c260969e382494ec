/**
 * Redis Cluster key slots: CRC16 (XMODEM) of the key, or of its hash tag, modulo 16384, as
 * Redis computes them (https://redis.io/docs/reference/cluster-spec/#key-distribution-model).
 *
 * A hash tag is the part between the first `{` and the first `}` after it, when that part is not
 * empty: keys with the same tag share a slot, which every multi-key script needs. The drivers put
 * the tag on what spreads load (a channel, a job shard), never on one name for everything.
 */

const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i += 1) {
    let crc = i << 8;
    for (let b = 0; b < 8; b += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    t[i] = crc;
  }
  return t;
})();

export const SLOTS = 16384;

function crc16(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i += 1) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ bytes[i]!) & 0xff]!;
  return crc;
}

/** The slot of `key` (UTF-8 bytes, as ioredis sends a string key). */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b); // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) return crc16(bytes, open + 1, close) % SLOTS;
  }
  return crc16(bytes, 0, bytes.length) % SLOTS;
}

/** `{<part>}`: a hash tag around `part`. Braces inside `part` would end the tag early, so they are refused. */
export function hashTag(part: string): string {
  if (part.includes('{') || part.includes('}')) throw new RangeError(`a hash tag cannot contain braces (got ${JSON.stringify(part)})`);
  return `{${part}}`;
}
