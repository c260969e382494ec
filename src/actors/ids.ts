/**
 * Ids the service mints (conversations, messages): UUIDv7 (RFC 9562), a 48-bit millisecond
 * timestamp then 74 random bits. Time-ordered ids land at the right edge of the store's
 * primary-key indexes, so a batch of new messages dirties a few adjacent index pages instead of
 * one random page each (random v4 ids scatter every insert across the whole index: more pages
 * written per group commit, more cache misses). Still unguessable: 74 random bits per
 * millisecond.
 */
import crypto from 'node:crypto';

const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

export function uuidv7(now: number = Date.now()): string {
  if (offset === pool.length) {
    crypto.randomFillSync(pool);
    offset = 0;
  }
  const b = pool.subarray(offset, offset + 16);
  offset += 16;
  return layout(b, now);
}

/**
 * A UUIDv7 of time `ms` whose other bits are a digest of `seed`: the same inputs always make the
 * same id. For what a request under an Idempotency-Key creates (http/idempotency.ts): a re-run
 * of the key writes the same id, which the store answers instead of writing a second row. Its
 * bits are as unpredictable as the seed is; ids name things, they grant nothing (every access is
 * checked against the caller's membership).
 */
export function uuidv7Of(ms: number, seed: string): string {
  return layout(crypto.createHash('sha256').update(seed).digest().subarray(0, 16), ms);
}

/** Writes the time, version and variant over 16 random (or digest) bytes; answers the text form. */
function layout(b: Buffer, now: number): string {
  // 48-bit big-endian milliseconds; Math.floor keeps the high part exact past 2^32.
  const hi = Math.floor(now / 0x10000);
  b[0] = (hi >>> 24) & 0xff;
  b[1] = (hi >>> 16) & 0xff;
  b[2] = (hi >>> 8) & 0xff;
  b[3] = hi & 0xff;
  b[4] = (now >>> 8) & 0xff;
  b[5] = now & 0xff;
  b[6] = (b[6]! & 0x0f) | 0x70; // version 7
  b[8] = (b[8]! & 0x3f) | 0x80; // variant 10
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
