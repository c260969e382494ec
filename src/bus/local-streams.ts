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
 * Events are held as their JSON text in a Buffer, outside the JS heap, packed once per event
 * object however many channels it goes to (a DIRECT or GROUP message goes to every member's own
 * channel). Held as objects, a full window (64 MiB by default) is hundreds of thousands of small
 * objects that every major GC marks and that were promoted through the young generation first;
 * packed, an entry is three small objects and the bytes sit off-heap (measured: ~4x less heap per
 * held event and ~3x shorter full GCs with 100,000 events held; docs/benchmarks.md). Listeners
 * still get the published object itself; `readSince` answers copies parsed from the JSON, as
 * the Redis driver does, so events must be JSON values (every event of the chat bus is).
 * Epochs come from one process-wide counter that never falls behind the clock in microseconds:
 * unique within the process (across bus instances too), and above every epoch of an earlier run
 * unless that run created more than one channel log per microsecond on average.
 */
import type { BusEntry, Listener, ReadSinceResult } from './types.ts';

interface Entry<E> {
  offset: number;
  at: number;
  size: number;
  /** The event's JSON, UTF-8. */
  packed: Buffer;
  /** Set when the entry left its log; the global FIFO skips such entries. */
  evicted: boolean;
}

interface ChannelLog<E> {
  readonly channel: string;
  readonly epoch: number;
  lastOffset: number;
  evictedThrough: number;
  /** Held entries, oldest first, from index `head`. */
  entries: Entry<E>[];
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
/** Bytes charged per entry on top of the event's JSON: the entry, its Buffer and FIFO slot (measured ~250). */
const ENTRY_OVERHEAD = 256;

let lastEpoch = 0;
function nextEpoch(): number {
  lastEpoch = Math.max(lastEpoch + 1, Date.now() * 1000);
  return lastEpoch;
}

export class LocalStreams<E> {
  private readonly logs = new Map<string, ChannelLog<E>>();
  /** Every entry in publish order across channels; evicted ones are skipped and compacted away. */
  private fifo: Array<{ log: ChannelLog<E>; entry: Entry<E> }> = [];
  private fifoHead = 0;
  private held = 0;
  private bytes = 0;
  private readonly packs = new WeakMap<object, Buffer>();

  constructor(private readonly o: LocalStreamsOptions) {}

  publish(channel: string, event: E): string {
    const log = this.logs.get(channel) ?? this.open(channel);
    const now = this.o.now();
    log.touched = now;
    this.expire(log, now);
    const packed = this.pack(event);
    const entry: Entry<E> = { offset: (log.lastOffset += 1), at: now, size: ENTRY_OVERHEAD + packed.length, packed, evicted: false };
    log.entries.push(entry);
    this.fifo.push({ log, entry });
    this.held += 1;
    this.bytes += entry.size;
    if (log.entries.length - log.head > this.o.maxEventsPerChannel) this.evictHead(log);
    while (this.bytes > this.o.maxTotalBytes && this.evictOldest());
    const id = `${log.epoch}-${entry.offset}`;
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
    for (let i = log.head + (offset - log.evictedThrough); i < log.entries.length; i += 1) {
      const entry = log.entries[i]!;
      events.push({ id: `${log.epoch}-${entry.offset}`, channel, event: JSON.parse(entry.packed.toString('utf8')) as E });
    }
    return { reset: false, events };
  }

  /** Expires aged events everywhere and drops idle logs; the bus calls it on a timer. */
  sweep(): void {
    const now = this.o.now();
    for (const log of this.logs.values()) {
      this.expire(log, now);
      if (log.listeners.size === 0 && log.head === log.entries.length && now - log.touched >= this.o.maxAgeMs) this.logs.delete(log.channel);
    }
  }

  clear(): void {
    this.logs.clear();
    this.fifo = [];
    this.fifoHead = 0;
    this.held = 0;
    this.bytes = 0;
  }

  /** Held events and bytes, and logs: for tests and metrics. */
  stats(): { channels: number; events: number; bytes: number } {
    return { channels: this.logs.size, events: this.held, bytes: this.bytes };
  }

  private open(channel: string): ChannelLog<E> {
    const log: ChannelLog<E> = { channel, epoch: nextEpoch(), lastOffset: 0, evictedThrough: 0, entries: [], head: 0, listeners: new Set(), touched: this.o.now() };
    this.logs.set(channel, log);
    return log;
  }

  /** The event's JSON as bytes: made once per event object (one event often goes to several channels). */
  private pack(event: E): Buffer {
    if (typeof event !== 'object' || event === null) return Buffer.from(JSON.stringify(event) ?? 'null');
    let packed = this.packs.get(event);
    if (packed === undefined) this.packs.set(event, (packed = Buffer.from(JSON.stringify(event))));
    return packed;
  }

  private expire(log: ChannelLog<E>, now: number): void {
    const limit = now - this.o.maxAgeMs;
    while (log.head < log.entries.length && log.entries[log.head]!.at < limit) this.evictHead(log);
  }

  private evictHead(log: ChannelLog<E>): void {
    const entry = log.entries[log.head]!;
    entry.evicted = true;
    log.evictedThrough = entry.offset;
    log.head += 1;
    this.held -= 1;
    this.bytes -= entry.size;
    // Amortized O(1): shift the array only once half of it is dead.
    if (log.head > 32 && log.head * 2 > log.entries.length) {
      log.entries = log.entries.slice(log.head);
      log.head = 0;
    }
    this.compactFifo();
  }

  /** Evicts the globally oldest held entry; false when nothing is held. */
  private evictOldest(): boolean {
    while (this.fifoHead < this.fifo.length) {
      const { log, entry } = this.fifo[this.fifoHead]!;
      this.fifoHead += 1;
      if (!entry.evicted) {
        // The oldest held entry of all is necessarily the oldest of its own log.
        this.evictHead(log);
        return true;
      }
    }
    return false;
  }

  /** Keeps the FIFO proportional to what is held, however entries left (count, age, bytes). */
  private compactFifo(): void {
    const slots = this.fifo.length - this.fifoHead;
    if (slots < 1024 || slots < this.held * 2) return;
    this.fifo = this.fifo.slice(this.fifoHead).filter((slot) => !slot.entry.evicted);
    this.fifoHead = 0;
  }
}
