/**
 * In-process event streams: one ring of recent events per channel, bounded per channel (count,
 * age) and in total (bytes), with listeners called synchronously in publish order.
 *
 *   publish(ch, e) ──> log(ch): [evictedThrough] e_k+1 e_k+2 ... e_last   (offsets dense, 1..)
 *                        │                                           └─> listeners, in order
 *                        └─ global FIFO of every held entry: the oldest goes first when the
 *                           byte bound is passed, whichever channel it belongs to
 *
 * `evictedThrough` is the newest offset the log no longer holds: `readSince` can answer an id
 * exactly when its offset is at least that (nothing after it was dropped).
 *
 * A log that holds no events, has no listeners and was not touched (published to, asked its
 * `head`, left by its last listener) for `maxAgeMs` is dropped by the sweep, so idle channels
 * cost nothing for long; if the channel is published to again, its new log gets a new epoch,
 * because the old offsets are forgotten and must not be reused under the same epoch. Keeping an
 * empty log that long is what lets a position from `head` (`<epoch>-<lastOffset>`, `<epoch>-0`
 * for a channel never published to) resume a channel whose follower left while it was silent.
 * Events are held as their JSON in one byte ring per bus (off the JS heap; it starts at 1 MiB
 * and doubles up to `maxTotalBytes`, then wraps), and each held entry is only numbers in arrays
 * (when, where, how long): publishing allocates no object that the window keeps. An event
 * published to several channels right after another (a GROUP message to each member's channel)
 * is written once and shared. Bytes about to be overwritten evict the entries that hold them,
 * oldest first, so a quiet channel's old event goes when the ring comes round even if no other
 * bound took it. Why: held as objects, a full window was hundreds of thousands of small objects,
 * promoted through the young generation and marked by every major GC (measured with 100,000
 * events held: 62 heap bytes per event instead of 739, a full GC of 5 ms instead of 68 ms;
 * `npm run bench -- bus-window`). Listeners still get the published object itself; `readSince`
 * answers copies parsed from the JSON, as the Redis driver does, so events must be JSON values
 * and must not change after they were published.
 * Epochs come from one process-wide counter that never falls behind the clock in microseconds:
 * unique within the process (across bus instances too), and above every epoch of an earlier run
 * unless that run created more than one channel log per microsecond on average.
 */
import type { BusEntry, Listener, ReadSinceResult } from './types.ts';

interface ChannelLog<E> {
  readonly channel: string;
  readonly epoch: number;
  lastOffset: number;
  evictedThrough: number;
  /**
   * Held entries, oldest first from index `head` (offset = evictedThrough + 1 + index - head), as
   * numbers only: when published (`ats`), and where the JSON sits in the byte ring.
   */
  ats: number[];
  starts: number[];
  lens: number[];
  head: number;
  listeners: Set<Listener<E>>;
  /** When it was last published to, asked its head, or left by a listener (the injected clock). */
  touched: number;
}

export interface LocalStreamsOptions {
  maxEventsPerChannel: number;
  maxAgeMs: number;
  maxTotalBytes: number;
  now: () => number;
  onListenerError: (error: unknown, channel: string) => void;
}

const ID = /^(\d{1,16})-(\d{1,16})$/;
/** Bytes charged per entry on top of the event's JSON: its numbers in the log and the FIFO (measured ~60). */
const ENTRY_OVERHEAD = 64;
/** The ring starts this small and doubles up to the byte bound (or MAX_RING). */
const FIRST_RING = 1 << 20;
const MAX_RING = 2 ** 31 - 1;

let lastEpoch = 0;
function nextEpoch(): number {
  lastEpoch = Math.max(lastEpoch + 1, Date.now() * 1000);
  return lastEpoch;
}

export class LocalStreams<E> {
  private readonly logs = new Map<string, ChannelLog<E>>();
  /**
   * Every entry in publish order across channels (log, offset, ring position), evicted ones
   * skipped and compacted away; parallel arrays, so an entry allocates no object.
   */
  private fifoLogs: ChannelLog<E>[] = [];
  private fifoOffsets: number[] = [];
  private fifoStarts: number[] = [];
  private fifoHead = 0;
  private held = 0;
  private bytes = 0;
  /** The JSON of held events, written in publish order and wrapping around (allocated on first use). */
  private ring: Buffer | null = null;
  private writeAt = 0;
  /** The last event written: published to its next channel right after, it shares the bytes. */
  private lastEvent: unknown = undefined;
  private lastStart = 0;
  private lastLen = 0;

  constructor(private readonly o: LocalStreamsOptions) {}

  publish(channel: string, event: E): string {
    const log = this.logs.get(channel) ?? this.open(channel);
    const now = this.o.now();
    log.touched = now;
    this.expire(log, now);
    const offset = (log.lastOffset += 1);
    const [start, len] = this.pack(event);
    if (start < 0) {
      // Larger than the whole window: it is published, but nothing after it can resume past it.
      this.dropAll(log);
      log.evictedThrough = offset;
      log.head = log.ats.length;
    } else {
      log.ats.push(now);
      log.starts.push(start);
      log.lens.push(len);
      this.fifoLogs.push(log);
      this.fifoOffsets.push(offset);
      this.fifoStarts.push(start);
      this.held += 1;
      this.bytes += ENTRY_OVERHEAD + len;
      if (log.ats.length - log.head > this.o.maxEventsPerChannel) this.evictHead(log);
      while (this.bytes > this.o.maxTotalBytes && this.evictOldest());
    }
    this.compactFifo(); // the evictions above may only have moved the FIFO's head
    const id = `${log.epoch}-${offset}`;
    if (log.listeners.size > 0) {
      const delivered: BusEntry<E> = { id, channel, event };
      // A copy: a listener may unsubscribe (itself or another) while we iterate.
      for (const listener of [...log.listeners]) {
        try {
          listener(delivered);
        } catch (error) {
          this.o.onListenerError(error, channel);
        }
      }
    }
    return id;
  }

  subscribe(channel: string, listener: Listener<E>): () => void {
    const log = this.logs.get(channel) ?? this.open(channel);
    // Wrapped, so one function subscribed twice is two subscriptions with two unsubscribes.
    const own: Listener<E> = (entry) => listener(entry);
    log.listeners.add(own);
    return () => {
      if (log.listeners.delete(own)) log.touched = this.o.now();
    };
  }

  /** `<epoch>-<lastOffset>`: the newest offset published in the epoch, 0 when none was. */
  head(channel: string): string {
    const log = this.logs.get(channel) ?? this.open(channel);
    log.touched = this.o.now();
    return `${log.epoch}-${log.lastOffset}`;
  }

  readSince(channel: string, lastEventId: string): ReadSinceResult<E> {
    const match = ID.exec(lastEventId);
    const log = this.logs.get(channel);
    if (!match || !log || Number(match[1]) !== log.epoch) return { reset: true };
    const offset = Number(match[2]);
    this.expire(log, this.o.now());
    if (offset > log.lastOffset || offset < log.evictedThrough) return { reset: true };
    const events: BusEntry<E>[] = [];
    // Entries are dense: the one after `offset` sits at a known index.
    const ring = this.ring;
    for (let i = log.head + (offset - log.evictedThrough); i < log.ats.length && ring !== null; i += 1) {
      const start = log.starts[i]!;
      const at = log.evictedThrough + 1 + i - log.head;
      events.push({ id: `${log.epoch}-${at}`, channel, event: JSON.parse(ring.toString('utf8', start, start + log.lens[i]!)) as E });
    }
    return { reset: false, events };
  }

  /** Expires aged events everywhere and drops idle logs; the bus calls it on a timer. */
  sweep(): void {
    const now = this.o.now();
    for (const log of this.logs.values()) {
      this.expire(log, now);
      if (log.listeners.size === 0 && log.head === log.ats.length && now - log.touched >= this.o.maxAgeMs) this.logs.delete(log.channel);
    }
  }

  clear(): void {
    this.logs.clear();
    this.fifoLogs = [];
    this.fifoOffsets = [];
    this.fifoStarts = [];
    this.fifoHead = 0;
    this.held = 0;
    this.bytes = 0;
    this.writeAt = 0;
    this.lastEvent = undefined;
  }

  /** Held events and bytes, and logs: for tests and metrics. */
  stats(): { channels: number; events: number; bytes: number } {
    return { channels: this.logs.size, events: this.held, bytes: this.bytes };
  }

  private open(channel: string): ChannelLog<E> {
    const log: ChannelLog<E> = { channel, epoch: nextEpoch(), lastOffset: 0, evictedThrough: 0, ats: [], starts: [], lens: [], head: 0, listeners: new Set(), touched: this.o.now() };
    this.logs.set(channel, log);
    return log;
  }

  /**
   * Writes the event's JSON into the ring and answers where: [start, length], or [-1, 0] when it
   * is larger than the ring. The same event published again right away (its next channel) shares
   * the bytes. Before bytes are overwritten, the entries holding them are evicted.
   */
  private pack(event: E): [number, number] {
    if (event === this.lastEvent && typeof event === 'object' && event !== null) return [this.lastStart, this.lastLen];
    const json = JSON.stringify(event) ?? 'null';
    const len = Buffer.byteLength(json);
    const size = Math.min(this.o.maxTotalBytes, MAX_RING);
    if (len + ENTRY_OVERHEAD > size) return [-1, 0];
    this.ring ??= Buffer.allocUnsafeSlow(Math.min(size, FIRST_RING));
    if (this.writeAt + len > this.ring.length && this.ring.length < size) {
      // Not wrapped yet (the ring wraps only at full size): grow, the bytes keep their positions.
      const grown = Buffer.allocUnsafeSlow(Math.min(size, Math.max(this.ring.length * 2, this.writeAt + len)));
      this.ring.copy(grown, 0, 0, this.writeAt);
      this.ring = grown;
    }
    if (this.writeAt + len > size) {
      // Wrap: what sits between here and the end is the oldest of all; it goes first.
      this.evictRing(this.writeAt, size);
      this.writeAt = 0;
    }
    const start = this.writeAt;
    this.evictRing(start, start + len);
    this.ring.write(json, start, len, 'utf8');
    this.writeAt = start + len;
    this.lastEvent = event;
    this.lastStart = start;
    this.lastLen = len;
    return [start, len];
  }

  /** Evicts the oldest entries whose bytes start in [from, to): they are about to be overwritten. */
  private evictRing(from: number, to: number): void {
    for (let i = this.oldestHeld(); i >= 0 && this.fifoStarts[i]! >= from && this.fifoStarts[i]! < to; i = this.oldestHeld()) {
      this.fifoHead += 1;
      this.evictHead(this.fifoLogs[i]!); // the oldest held entry of all is the oldest of its log
    }
  }

  /** The FIFO index of the oldest held entry (entries gone by count or age are skipped), or -1. */
  private oldestHeld(): number {
    while (this.fifoHead < this.fifoLogs.length) {
      const i = this.fifoHead;
      if (this.fifoOffsets[i]! > this.fifoLogs[i]!.evictedThrough) return i;
      this.fifoHead += 1;
    }
    return -1;
  }

  private expire(log: ChannelLog<E>, now: number): void {
    const limit = now - this.o.maxAgeMs;
    while (log.head < log.ats.length && log.ats[log.head]! < limit) this.evictHead(log);
  }

  /** Drops every entry `log` holds (an event too large for the window makes them unresumable). */
  private dropAll(log: ChannelLog<E>): void {
    while (log.head < log.ats.length) this.evictHead(log);
  }

  private evictHead(log: ChannelLog<E>): void {
    log.evictedThrough += 1;
    this.held -= 1;
    this.bytes -= ENTRY_OVERHEAD + log.lens[log.head]!;
    log.head += 1;
    // Amortized O(1): shift the arrays only once half of them is dead.
    if (log.head > 32 && log.head * 2 > log.ats.length) {
      log.ats = log.ats.slice(log.head);
      log.starts = log.starts.slice(log.head);
      log.lens = log.lens.slice(log.head);
      log.head = 0;
    }
    this.compactFifo();
  }

  /** Evicts the globally oldest held entry; false when nothing is held. */
  private evictOldest(): boolean {
    const i = this.oldestHeld();
    if (i < 0) return false;
    this.fifoHead += 1;
    this.evictHead(this.fifoLogs[i]!);
    return true;
  }

  /**
   * Keeps the FIFO proportional to what is held, however entries left (count, age, bytes): it is
   * rebuilt when its live part is mostly dead, and when the consumed prefix is most of it (the
   * prefix left alone grew without bound: 24 bytes per publish forever, and copies of ever
   * larger arrays that were most of what the send path promoted to the old generation).
   */
  private compactFifo(): void {
    const slots = this.fifoLogs.length - this.fifoHead;
    const consumed = this.fifoHead >= 1024 && this.fifoHead >= slots;
    if (!consumed && (slots < 1024 || slots < this.held * 2)) return;
    const logs: ChannelLog<E>[] = [];
    const offsets: number[] = [];
    const starts: number[] = [];
    for (let i = this.fifoHead; i < this.fifoLogs.length; i += 1) {
      const log = this.fifoLogs[i]!;
      if (this.fifoOffsets[i]! <= log.evictedThrough) continue;
      logs.push(log);
      offsets.push(this.fifoOffsets[i]!);
      starts.push(this.fifoStarts[i]!);
    }
    this.fifoLogs = logs;
    this.fifoOffsets = offsets;
    this.fifoStarts = starts;
    this.fifoHead = 0;
  }
}
