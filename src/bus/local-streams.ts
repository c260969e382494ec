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
 * and doubles up to `maxTotalBytes`, then wraps), and each held entry is three numbers in its
 * channel's circular buffer and three in the FIFO's (typed arrays that only ever double):
 * publishing allocates nothing that the window keeps. An event
 * published to several channels right after another (a GROUP message to each member's channel)
 * is written once and shared. Bytes about to be overwritten evict the entries that hold them,
 * oldest first, so a quiet channel's old event goes when the ring comes round even if no other
 * bound took it. Why: held as objects, a full window was hundreds of thousands of small objects,
 * promoted through the young generation and marked by every major GC (measured with 100,000
 * events held: 3 heap bytes per event instead of 739, a full GC of 3.8 ms instead of 68 ms;
 * `npm run bench -- bus-window`). Listeners still get the published object itself; `readSince`
 * answers copies parsed from the JSON, as the Redis driver does, so events must be JSON values
 * and must not change after they were published.
 * Epochs come from one process-wide counter that never falls behind the clock in microseconds:
 * unique within the process (across bus instances too), and above every epoch of an earlier run
 * unless that run created more than one channel log per microsecond on average.
 */
import type { BusEntry, Listener, ReadSinceResult } from './types.ts';

export interface LocalStreamsOptions {
  maxEventsPerChannel: number;
  maxAgeMs: number;
  maxTotalBytes: number;
  now: () => number;
  onListenerError: (error: unknown, channel: string) => void;
}

const ID = /^(\d{1,16})-(\d{1,16})$/;
/** Bytes charged per entry on top of the event's JSON: six float64s in the channel's records and the FIFO, with slack. */
const ENTRY_OVERHEAD = 64;
/** The ring starts this small and doubles up to the byte bound (or MAX_RING). */
const FIRST_RING = 1 << 20;
const MAX_RING = 2 ** 31 - 1;

let lastEpoch = 0;
function nextEpoch(): number {
  lastEpoch = Math.max(lastEpoch + 1, Date.now() * 1000);
  return lastEpoch;
}

/**
 * Records of a few numbers in one Float64Array used as a circular buffer: push at the tail,
 * drop at the head, read by position from the head. It grows by doubling and never shrinks, so
 * in a steady state nothing is allocated (arrays rebuilt by `slice` every few hundred ms were
 * promoted out of the young generation and made most of what the send path still promoted).
 */
/** Numbers per record: every record here has three. */
const WIDTH = 3;

class Records {
  private buf: Float64Array;
  private mask: number;
  private first = 0;
  length = 0;

  constructor() {
    this.buf = new Float64Array(8 * WIDTH);
    this.mask = 7;
  }

  push(a: number, b: number, c: number): void {
    if (this.length > this.mask) this.grow();
    this.put(this.length, a, b, c);
    this.length += 1;
  }

  /** Field `field` of the record `k` places after the head. */
  get(k: number, field: number): number {
    return this.buf[((this.first + k) & this.mask) * WIDTH + field]!;
  }

  shift(): void {
    this.first = (this.first + 1) & this.mask;
    this.length -= 1;
  }

  /** Keeps, in order, the records `keep` says yes to; in place. */
  filter(keep: (a: number, b: number, c: number) => boolean): void {
    let kept = 0;
    for (let k = 0; k < this.length; k += 1) {
      const a = this.get(k, 0), b = this.get(k, 1), c = this.get(k, 2);
      if (!keep(a, b, c)) continue;
      this.put(kept, a, b, c);
      kept += 1;
    }
    this.length = kept;
  }

  /** Writes the record `k` places after the head (k <= length). */
  private put(k: number, a: number, b: number, c: number): void {
    const i = ((this.first + k) & this.mask) * WIDTH;
    this.buf[i] = a;
    this.buf[i + 1] = b;
    this.buf[i + 2] = c;
  }

  private grow(): void {
    const cap = (this.mask + 1) * 2;
    const next = new Float64Array(cap * WIDTH);
    for (let k = 0; k < this.length; k += 1) for (let f = 0; f < WIDTH; f += 1) next[k * WIDTH + f] = this.get(k, f);
    this.buf = next;
    this.mask = cap - 1;
    this.first = 0;
  }
}

/** Fields of a channel's records: when published, where the JSON sits in the ring, its length. */
const AT = 0;
const START = 1;
const LEN = 2;
/** Fields of the FIFO's records: the log's id, the entry's offset, where its JSON sits. */
const LOG = 0;
const OFFSET = 1;
const AT_RING = 2;

interface ChannelLog<E> {
  readonly id: number;
  readonly channel: string;
  readonly epoch: number;
  lastOffset: number;
  evictedThrough: number;
  /** Held entries, oldest first: the first has offset evictedThrough + 1 (offsets are dense). */
  entries: Records;
  listeners: Set<Listener<E>>;
  /** When it was last published to, asked its head, or left by a listener (the injected clock). */
  touched: number;
}

export class LocalStreams<E> {
  private readonly logs = new Map<string, ChannelLog<E>>();
  private readonly logsById = new Map<number, ChannelLog<E>>();
  private nextLogId = 1;
  /** Every entry in publish order across channels (log id, offset, ring position); dead ones are skipped and filtered out. */
  private readonly fifo = new Records();
  private held = 0;
  private bytes = 0;
  /** The JSON of held events, written in publish order and wrapping around (allocated on first use). */
  private ring: Buffer | null = null;
  private writeAt = 0;
  /** The last event written: published to its next channel right after, it shares the bytes. */
  private lastEvent: unknown = undefined;
  private lastJson = '';
  private lastStart = 0;
  private lastLen = 0;

  constructor(private readonly o: LocalStreamsOptions) {}

  publish(channel: string, event: E): string {
    const log = this.logs.get(channel) ?? this.open(channel);
    const now = this.o.now();
    log.touched = now;
    this.expire(log, now);
    const offset = (log.lastOffset += 1);
    const start = this.pack(event);
    const len = this.lastLen;
    if (start < 0) {
      // Larger than the whole window: it is published, but nothing after it can resume past it.
      this.dropAll(log);
      log.evictedThrough = offset;
    } else {
      log.entries.push(now, start, len);
      this.fifo.push(log.id, offset, start);
      this.held += 1;
      this.bytes += ENTRY_OVERHEAD + len;
      if (log.entries.length > this.o.maxEventsPerChannel) this.evictHead(log);
      while (this.bytes > this.o.maxTotalBytes && this.evictOldest());
    }
    this.compactFifo(); // the evictions above may only have moved the FIFO's head
    const id = `${log.epoch}-${offset}`;
    if (log.listeners.size > 0) {
      const delivered: BusEntry<E> = { id, channel, event, json: this.lastJson };
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

  subscribe(channel: string, listener: Listener<E>, _onGap?: () => void): () => void {
    // In one process nothing is ever missed: no gaps.
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
    for (let k = offset - log.evictedThrough; k < log.entries.length && ring !== null; k += 1) {
      const start = log.entries.get(k, START);
      const json = ring.toString('utf8', start, start + log.entries.get(k, LEN));
      events.push({ id: `${log.epoch}-${log.evictedThrough + 1 + k}`, channel, event: JSON.parse(json) as E, json });
    }
    return { reset: false, events };
  }

  /** Expires aged events everywhere and drops idle logs; the bus calls it on a timer. */
  sweep(): void {
    const now = this.o.now();
    for (const log of this.logs.values()) {
      this.expire(log, now);
      if (log.listeners.size === 0 && log.entries.length === 0 && now - log.touched >= this.o.maxAgeMs) this.drop(log);
    }
  }

  clear(): void {
    this.logs.clear();
    this.logsById.clear();
    this.fifo.filter(() => false);
    this.held = 0;
    this.bytes = 0;
    this.writeAt = 0;
    this.lastEvent = undefined;
    this.lastJson = '';
  }

  /** Held events and bytes, and logs: for tests and metrics. */
  stats(): { channels: number; events: number; bytes: number } {
    return { channels: this.logs.size, events: this.held, bytes: this.bytes };
  }

  private open(channel: string): ChannelLog<E> {
    const log: ChannelLog<E> = { id: this.nextLogId++, channel, epoch: nextEpoch(), lastOffset: 0, evictedThrough: 0, entries: new Records(), listeners: new Set(), touched: this.o.now() };
    this.logs.set(channel, log);
    this.logsById.set(log.id, log);
    return log;
  }

  private drop(log: ChannelLog<E>): void {
    this.logs.delete(log.channel);
    this.logsById.delete(log.id);
  }

  /**
   * Writes the event's JSON into the ring and answers where it starts (its length is then
   * `lastLen`), or -1 when it is larger than the ring. The same event published again right
   * away (its next channel) shares the bytes. Before bytes are overwritten, the entries holding
   * them are evicted.
   */
  private pack(event: E): number {
    if (event === this.lastEvent && typeof event === 'object' && event !== null) return this.lastStart;
    const json = JSON.stringify(event) ?? 'null';
    const len = Buffer.byteLength(json);
    const size = Math.min(this.o.maxTotalBytes, MAX_RING);
    this.lastJson = json;
    if (len + ENTRY_OVERHEAD > size) {
      this.lastEvent = undefined;
      return -1;
    }
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
    return start;
  }

  /** Evicts the oldest entries whose bytes start in [from, to): they are about to be overwritten. */
  private evictRing(from: number, to: number): void {
    for (let log = this.oldestHeld(); log !== null; log = this.oldestHeld()) {
      const start = this.fifo.get(0, AT_RING);
      if (start < from || start >= to) return;
      this.fifo.shift();
      this.evictHead(log); // the oldest held entry of all is the oldest of its log
    }
  }

  /** The log of the FIFO's first record once dead records (count, age, dropped logs) are gone, or null. */
  private oldestHeld(): ChannelLog<E> | null {
    while (this.fifo.length > 0) {
      const log = this.logsById.get(this.fifo.get(0, LOG));
      if (log !== undefined && this.fifo.get(0, OFFSET) > log.evictedThrough) return log;
      this.fifo.shift();
    }
    return null;
  }

  private expire(log: ChannelLog<E>, now: number): void {
    const limit = now - this.o.maxAgeMs;
    while (log.entries.length > 0 && log.entries.get(0, AT) < limit) this.evictHead(log);
  }

  /** Drops every entry `log` holds (an event too large for the window makes them unresumable). */
  private dropAll(log: ChannelLog<E>): void {
    while (log.entries.length > 0) this.evictHead(log);
  }

  private evictHead(log: ChannelLog<E>): void {
    log.evictedThrough += 1;
    this.held -= 1;
    this.bytes -= ENTRY_OVERHEAD + log.entries.get(0, LEN);
    log.entries.shift();
  }

  /** Evicts the globally oldest held entry; false when nothing is held. */
  private evictOldest(): boolean {
    const log = this.oldestHeld();
    if (log === null) return false;
    this.fifo.shift();
    this.evictHead(log);
    return true;
  }

  /** Keeps the FIFO proportional to what is held: dead records in its middle (count, age) are filtered out. */
  private compactFifo(): void {
    if (this.fifo.length < 1024 || this.fifo.length < this.held * 2) return;
    this.fifo.filter((id, offset) => {
      const log = this.logsById.get(id);
      return log !== undefined && offset > log.evictedThrough;
    });
  }
}
