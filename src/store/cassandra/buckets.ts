/**
 * Message buckets: `messages_by_conversation` is partitioned by (conversation_id, bucket), where
 * bucket = floor((seq - 1) / BUCKET_SIZE): seqs 1..1000 are bucket 0, 1001..2000 bucket 1...
 *
 * Why buckets of seqs and not of days:
 *  - a reader knows exactly which partitions exist from `last_seq` alone: history walks buckets
 *    bucketOf(start) down to 0, unread counts bucketOf(marker + 1) up to bucketOf(last_seq). With
 *    day buckets a conversation quiet for a year costs 365 empty-partition probes per page, or a
 *    second index of "days that have messages" kept in step with every append;
 *  - partition size is bounded by message count whatever the traffic: 1000 messages of a few KB
 *    stay far below the ~100 MB where compaction and repair start to hurt, while a busy channel
 *    would put millions of rows into one day partition;
 *  - a page (at most 100 messages through the API) touches one partition, or two when it
 *    straddles a boundary.
 * BUCKET_SIZE is part of the data format: changing it orphans every stored message. Retention by
 * age uses its own per-day index (messages.ts), so buckets need not follow time.
 */
import { messagePosition, type MessagePosition } from '../positions.ts';

export const BUCKET_SIZE = 1000;

export function bucketOf(seq: number, size: number = BUCKET_SIZE): number {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new RangeError(`seq must be a positive integer (got ${seq})`);
  return Math.floor((seq - 1) / size);
}

/** The seqs a bucket holds, inclusive. */
export function bucketRange(bucket: number, size: number = BUCKET_SIZE): { first: number; last: number } {
  return { first: bucket * size + 1, last: (bucket + 1) * size };
}

/**
 * The slices a newest-first read walks to cover seqs `from` down to 1: one per bucket, each
 * `seq <= top` within its bucket. A page stops as soon as it has enough rows.
 */
export function* newestFirstSlices(from: number, size: number = BUCKET_SIZE): Generator<{ bucket: number; low: number; top: number }> {
  if (from < 1) return;
  for (let b = bucketOf(from, size); b >= 0; b -= 1) {
    const { first, last } = bucketRange(b, size);
    yield { bucket: b, low: first - 1, top: Math.min(from, last) };
  }
}

/** The slices covering seqs above `after` up to `through` (unread scans), oldest first. */
export function* oldestFirstSlices(after: number, through: number, size: number = BUCKET_SIZE): Generator<{ bucket: number; low: number; top: number }> {
  if (through <= after) return;
  for (let b = bucketOf(after + 1, size); b <= bucketOf(through, size); b += 1) {
    const { first, last } = bucketRange(b, size);
    yield { bucket: b, low: Math.max(after, first - 1), top: Math.min(through, last) };
  }
}

/**
 * Where a history page starts: below the position (exclusive) or at last_seq. History pages use
 * keyset positions, not the driver's paging state: the port's position is `{ seq }` (the API signs
 * it into the cursor), a page may span two partitions (a paging state belongs to one statement on
 * one partition), and a seq stays valid across nodes, driver versions and schema changes.
 */
export function historyStart(after: MessagePosition | null | undefined, last_seq: number): number {
  if (after == null) return last_seq;
  return Math.min(messagePosition(after).seq - 1, last_seq);
}
