/**
 * SSE event ids: one composite id for a stream that follows several bus channels.
 *
 * An EventSource remembers only the id of the last event it received and hands it back as
 * `Last-Event-ID` when it reconnects, so every `id:` line the stream writes carries the stream's
 * position on EVERY channel it follows, not just the channel of that event:
 *
 *   id = entry ("," entry)*        entry = tag ":" pct(bus id)
 *
 *   tag     8 base64url characters of SHA-256(channel name): short, stable across nodes and
 *           credentials (a fresh credential listing the same channel in another order, or one more
 *           channel, resumes fine), opaque to clients
 *   bus id  the bus's `<epoch>-<offset>` id of the last event of that channel the stream sent,
 *           percent-encoded (so a driver's id never clashes with `,` or `:`), or the channel's
 *           head when it sent none; or DROPPED_PREFIX + the credential's expiry for a channel the stream dropped (the
 *           user left or was removed, or the conversation was deleted; stream.ts)
 *
 * A stream puts every channel it follows in every id, from its first `ready` on (a channel it
 * has received nothing on carries the channel's head, bus `head()`), so a reconnect resumes
 * every channel. Length bound: an entry is at most MAX_ENTRY_LENGTH characters (8 + 1 + 52 for
 * the longest bus id either driver writes, `<20 digits>-<15>-<15>` on Redis; digits and `-`
 * need no percent-encoding; + 1 comma), and a credential names at most MAX_GRANT_CHANNELS
 * channels (credential.ts), so an id is at most 256 x 62 = 15,872 characters, under
 * MAX_EVENT_ID_LENGTH. The user's own channel on the Redis fan log (docs/bus.md) has a bus id of
 * one position per shard, at most MAX_FAN_SHARDS (8) of 52 characters joined by `.`: its entry
 * is at most 433 characters, and a credential holds one such channel, so 255 x 62 + 433 = 16,243
 * characters, still under the bound. Clients treat the id as opaque.
 */
import crypto from 'node:crypto';

/** Longer Last-Event-ID values are not ours (see the bound above). */
export const MAX_EVENT_ID_LENGTH = 16 * 1024;

/** The longest entry (tag, colon, bus id, comma) an id holds; see the bound above. */
export const MAX_ENTRY_LENGTH = 62;

/** Starts the position of a channel the stream dropped; `~` cannot start a bus id. */
export const DROPPED_PREFIX = '~';

const tags = new Map<string, string>();

/** The tag of a channel (memoized: the hub asks once per channel and event). */
export function channelTag(channel: string): string {
  let tag = tags.get(channel);
  if (tag === undefined) {
    tag = crypto.createHash('sha256').update(channel).digest('base64url').slice(0, 8);
    if (tags.size > 100_000) tags.clear();
    tags.set(channel, tag);
  }
  return tag;
}

/** The id line value for positions (tag → percent-encoded bus id), in insertion order. */
export function encodePositions(positions: ReadonlyMap<string, string>): string {
  let out = '';
  for (const [tag, enc] of positions) out += out === '' ? `${tag}:${enc}` : `,${tag}:${enc}`;
  return out;
}

/** tag → bus id (decoded), or null when `value` is not an id this service wrote. */
export function parseEventId(value: string): Map<string, string> | null {
  const out = new Map<string, string>();
  if (value === '') return out;
  if (value.length > MAX_EVENT_ID_LENGTH) return null;
  for (const part of value.split(',')) {
    const colon = part.indexOf(':');
    if (colon !== 8) return null;
    try {
      const id = decodeURIComponent(part.slice(colon + 1));
      if (id === '') return null;
      out.set(part.slice(0, colon), id);
    } catch {
      return null;
    }
  }
  return out;
}
