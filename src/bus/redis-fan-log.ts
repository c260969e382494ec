/**
 * The fan log: event streams for channels that receive most events together (a GROUP message
 * reaches every member's own channel), at a Redis cost per event independent of how many
 * channels it is for. docs/bus.md ("The fan log") has the design; in short:
 *
 *   publishMany([u1..un], e, key) ──EVALSHA fan-publish.lua──> XADD {fan:k}:s  e, p, m=u1..un, d=e
 *                                                                     (k = hash(key) mod shards)
 *   every node: one reader per shard ──XREAD BLOCK──> take(entry): for each of u1..un with a
 *               listener here, the listener gets the entry, its id the node's position
 *
 * A channel's events come from every shard, so its position is one entry position per shard,
 * `<epoch>-<ms>-<seq>` each, joined by `.` in shard order: "every event of the channel up to
 * these entries". The node's position (its readers' progress) is such a position for every
 * fanned channel at once: an entry id a listener gets is the node's position right after that
 * entry, `head` answers the node's position, and `readSince` reads each shard between the
 * given position and the node's, keeping the channel's entries (fan-read-since.lua), so that
 * replay and live delivery meet exactly: see readSince.
 *
 * Order: entries of one shard reach listeners in the shard's order; publishes with the same
 * key go to one shard, so one caller's publishes with one key keep their order on every
 * channel (the actor passes its conversation id). Entries of different shards are merged in
 * the order the node reads them, which differs between nodes; ids of one listener still only
 * grow (each shard's part does).
 *
 * Gaps: an entry whose `p` is not the shard's last entry seen, or of another epoch, means the
 * reader skipped entries (a failover lost them, or the shard's history was dropped): every
 * listener's onGap runs, and delivery continues from that entry.
 */
import type { RedisClient } from '../redis/client.ts';
import { defineScript } from '../redis/scripts.ts';
import { compare, newEpoch, parseId, type Position } from './redis-event-ids.ts';
import type { BusEntry, Listener, ReadSinceResult } from './types.ts';

export interface RedisFanLogOptions {
  /** Connection for scripts. */
  redis: RedisClient;
  /** Opens a connection of its own: one per shard, for its blocking reads. */
  open: (name: string) => RedisClient;
  nodeId: string;
  keyPrefix: string;
  shards: number;
  maxAgeMs: number;
  /** Entries a shard keeps at most (approximately): its memory bound. */
  maxEntries: number;
  /** One publish per key on its way at a time (a Redis Cluster; see RedisEventStreamsOptions.serial). */
  serial: boolean;
  /** Longest a read blocks; default 5 s. */
  blockMs?: number;
  /** Runs a publish, trying again through a Cluster failover (redis-event-streams.ts). */
  retry: <T>(run: () => Promise<T>) => Promise<T>;
  now: (() => number) | undefined;
  onListenerError: (error: unknown, channel: string) => void;
}

/** Live delivery of fanned channels skipped entries that can no longer be read back. */
export class FanGapError extends Error {
  constructor(shard: number) {
    super(`the reader of fan shard ${shard} skipped entries (a Redis failover lost them, or the shard's history was dropped)`);
    this.name = 'FanGapError';
  }
}

interface Shard {
  index: number;
  stream: string;
  meta: string;
  /** The last entry read: its epoch and id ('0-0' in an empty epoch); '' before the head. */
  epoch: string;
  last: string;
  ms: number;
  seq: number;
  /** `${epoch}-${last}`: this shard's part of the node's position. */
  pos: string;
  conn: RedisClient | null;
  /** Entry id → the node's position right after it, for publishes whose reply comes late. */
  marks: Map<string, string>;
  /** Publishes of this node on their way to this shard (marks are kept while any is). */
  sending: number;
  waiters: Waiter[];
}

interface Waiter {
  epoch: string;
  ms: number;
  seq: number;
  done: (reached: boolean) => void;
}

interface ChannelState<E> {
  listeners: Set<Listener<E>>;
  gaps: Set<() => void>;
  /** The id of the last entry delivered here, for readSince's `through`. */
  last: string | null;
}

interface FanScripts {
  busFanPublish(stream: string, meta: string, ...argv: string[]): Promise<[string, string, string]>;
  busFanReadSince(stream: string, meta: string, ...argv: string[]): Promise<Array<number | string>>;
  busFanHead(stream: string, meta: string, epoch: string): Promise<[string, string]>;
}

const MAX_MARKS = 4096;
/** How long a call waits for the shards' positions when the bus starts. */
const START_MS = 10_000;
/** How long readSince waits for this node's readers to reach a position another node gave. */
const REACH_MS = 3000;
/** How long a publish waits for this node's reader to read its entry back. */
const READ_BACK_MS = 10_000;

/** FNV-1a: the shard of a key, the same on every node. */
export function fanShardOf(key: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

export class RedisFanLog<E> {
  private readonly redis: RedisClient & FanScripts;
  private readonly shards: Shard[];
  private readonly channels = new Map<string, ChannelState<E>>();
  private readonly gates = new Map<string, Promise<void>>();
  private position: string | null = null;
  private readonly ready: Promise<void>;
  private started = false;
  /** Publishes waiting for the start. */
  private queued = 0;
  private closed = false;

  constructor(private readonly o: RedisFanLogOptions) {
    defineScript(o.redis, 'busFanPublish', 'bus/lua/fan-publish.lua', 2);
    defineScript(o.redis, 'busFanReadSince', 'bus/lua/fan-read-since.lua', 2);
    defineScript(o.redis, 'busFanHead', 'bus/lua/fan-head.lua', 2);
    this.redis = o.redis as RedisClient & FanScripts;
    this.shards = Array.from({ length: o.shards }, (_, index) => {
      const base = `${o.keyPrefix}bus:{fan:${index}}`;
      return { index, stream: `${base}:s`, meta: `${base}:m`, epoch: '', last: '', ms: 0, seq: 0, pos: '', conn: null, marks: new Map(), sending: 0, waiters: [] };
    });
    this.ready = Promise.all(this.shards.map((s) => this.start(s))).then(() => void (this.started = true));
    this.ready.catch(() => undefined);
  }

  /** Appends `event` once to the shard of `key`, for every one of `channels` (distinct). */
  publish(channels: readonly string[], event: E, key: string): Promise<string> {
    const json = JSON.stringify(event);
    if (json === undefined) return Promise.reject(new TypeError('bus events must be JSON values'));
    if (channels.some((c) => c.includes('\n') || c === '')) return Promise.reject(new TypeError('fanned channel names must be non-empty and hold no newline'));
    if (this.started && this.queued === 0) return this.send(channels, json, key);
    // Before the shards' positions are known, publishes wait, in call order.
    this.queued += 1;
    return this.whenReady().then(
      () => {
        this.queued -= 1;
        return this.send(channels, json, key);
      },
      (error: unknown) => {
        this.queued -= 1;
        throw error;
      },
    );
  }

  private send(channels: readonly string[], json: string, key: string): Promise<string> {
    const shard = this.shards[fanShardOf(key, this.shards.length)]!;
    const members = `\n${channels.join('\n')}\n`;
    // Marks are kept from before the command leaves: the reader may read the entry back before
    // the reply arrives.
    shard.sending += 1;
    const run = (): Promise<[string, string, string]> =>
      this.redis.busFanPublish(shard.stream, shard.meta, newEpoch(), json, members, this.nowArg(), String(this.o.maxAgeMs), String(this.o.maxEntries));
    let reply: Promise<[string, string, string]>;
    if (!this.o.serial) reply = run();
    else {
      // No await before the command when nothing of this key is on its way: call order holds.
      const gateKey = `${shard.index}|${key}`;
      const gate = this.gates.get(gateKey);
      reply = gate ? gate.then(() => this.o.retry(run)) : this.o.retry(run);
      const settled = reply.then(
        () => undefined,
        () => undefined,
      );
      this.gates.set(gateKey, settled);
      void settled.then(() => this.gates.get(gateKey) === settled && this.gates.delete(gateKey));
    }
    const done = reply.then(([epoch, id]) => this.readBack(shard, epoch, id));
    void done.then(
      () => this.sent(shard),
      () => this.sent(shard),
    );
    return done;
  }

  subscribe(channel: string, listener: Listener<E>, onGap?: () => void): () => void {
    let state = this.channels.get(channel);
    if (state === undefined) {
      state = { listeners: new Set(), gaps: new Set(), last: null };
      this.channels.set(channel, state);
    }
    const st = state;
    const own: Listener<E> = (entry) => listener(entry);
    const gap = onGap ? (): void => onGap() : null;
    st.listeners.add(own);
    if (gap) st.gaps.add(gap);
    return () => {
      st.listeners.delete(own);
      if (gap) st.gaps.delete(gap);
      if (st.listeners.size === 0 && this.channels.get(channel) === st) this.channels.delete(channel);
    };
  }

  /**
   * The channel's events after `lastEventId`, read from Redis up to this node's position, and
   * `through`: the id of the last entry this node delivered to the channel's listeners before
   * that position was taken. Live entries up to `through` are the replay's or were before
   * `lastEventId`; those after it come after the replay. So a listener that subscribed before
   * this call (the resume recipe) skips its live entries up to `through` and misses nothing.
   * The node first waits until its readers reached `lastEventId` (written by another node, it
   * may be ahead of this one), so what comes live is never at or before it.
   */
  async readSince(channel: string, lastEventId: string): Promise<ReadSinceResult<E>> {
    await this.whenReady();
    const parts = lastEventId.split('.');
    if (parts.length !== this.shards.length) return { reset: true };
    const from: Position[] = [];
    for (const part of parts) {
      const pos = parseId(part);
      if (pos === null) return { reset: true };
      from.push(pos);
    }
    const reached = await Promise.all(this.shards.map((s, k) => this.reach(s, from[k]!)));
    if (reached.includes(false)) return { reset: true };
    const through = this.channels.get(channel)?.last ?? null;
    const upto = this.shards.map((s) => ({ epoch: s.epoch, last: s.last, ms: s.ms, seq: s.seq }));
    const needle = `\n${channel}\n`;
    const found: Array<{ k: number; id: string; ms: number; seq: number; json: string }> = [];
    const replies = await Promise.all(
      this.shards.map(async (s, k) => {
        const f = from[k]!;
        const u = upto[k]!;
        if (u.epoch !== f.epoch) return false;
        if (compare(f.ms, f.seq, u.ms, u.seq) >= 0) return true;
        const reply = await this.redis.busFanReadSince(s.stream, s.meta, f.epoch, `${f.ms}-${f.seq}`, u.last, this.nowArg(), String(this.o.maxAgeMs), needle);
        if (reply[0] !== 1) return false;
        for (let i = 1; i < reply.length; i += 2) {
          const id = String(reply[i]);
          const pos = parseId(`0-${id}`)!;
          found.push({ k, id, ms: pos.ms, seq: pos.seq, json: String(reply[i + 1]) });
        }
        return true;
      }),
    );
    if (replies.includes(false)) return { reset: true };
    found.sort((a, b) => compare(a.ms, a.seq, b.ms, b.seq) || a.k - b.k);
    const cur = [...parts];
    const events: BusEntry<E>[] = found.map((f) => {
      cur[f.k] = `${upto[f.k]!.epoch}-${f.id}`;
      return { id: cur.join('.'), channel, event: JSON.parse(f.json) as E, json: f.json };
    });
    return through === null ? { reset: false, events } : { reset: false, events, through };
  }

  /** This node's position: every entry up to it has reached the listeners here. */
  async head(): Promise<string> {
    await this.whenReady();
    return this.here();
  }

  /** The start, within a bound: while Redis cannot be reached, calls fail rather than hang. */
  private whenReady(): Promise<void> {
    if (this.started) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('the fan log is closed'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the fan log could not read its shards' positions from Redis within ${START_MS} ms`)), START_MS);
      this.ready.then(() => {
        clearTimeout(timer);
        resolve();
      }, reject);
    });
  }

  /** As head, without waiting; null before the shards' positions are known. */
  current(): string | null {
    return this.started && !this.closed ? this.here() : null;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.shards) {
      s.conn?.disconnect();
      for (const w of s.waiters.splice(0)) w.done(false);
    }
    this.channels.clear();
  }

  private here(): string {
    return (this.position ??= this.shards.map((s) => s.pos).join('.'));
  }

  private nowArg(): string {
    return this.o.now ? String(Math.floor(this.o.now())) : '';
  }

  /** Learns the shard's position (fixing an empty epoch), then reads it until closed. */
  private async start(s: Shard): Promise<void> {
    for (let failures = 0; ; failures += 1) {
      if (this.closed) return;
      try {
        const [epoch, last] = await this.redis.busFanHead(s.stream, s.meta, newEpoch());
        this.moveTo(s, epoch, last);
        break;
      } catch {
        await sleep(Math.min(1000, 25 * 2 ** failures));
      }
    }
    const conn = this.o.open(`${this.o.nodeId}:fan:${s.index}`);
    conn.on('error', () => undefined); // the loop retries; ioredis reconnects
    // A blocking read must not wait behind, or hold back, an auto-pipeline.
    conn.options.enableAutoPipelining = false;
    s.conn = conn;
    if (this.closed) conn.disconnect();
    else void this.read(s, conn);
  }

  private async read(s: Shard, conn: RedisClient): Promise<void> {
    const block = String(this.o.blockMs ?? 5000);
    let failures = 0;
    while (!this.closed) {
      try {
        const reply = (await conn.xread('COUNT', 1024, 'BLOCK', block, 'STREAMS', s.stream, s.last)) as Array<[string, Array<[string, string[]]>]> | null;
        failures = 0;
        if (reply === null) continue;
        // No pause before the next read: a busy reader's replies batch on their own (COUNT 1024),
        // and a pause (tried: 2 ms) saved no Redis CPU at 1,200 msgs/s (docs/benchmarks.md).
        for (const [, entries] of reply) for (const [id, fields] of entries) this.take(s, id, fields);
      } catch {
        if (this.closed) return;
        failures += 1;
        await sleep(Math.min(1000, 25 * 2 ** failures));
      }
    }
  }

  private moveTo(s: Shard, epoch: string, last: string): void {
    const pos = parseId(`0-${last}`)!;
    s.epoch = epoch;
    s.last = last;
    s.ms = pos.ms;
    s.seq = pos.seq;
    s.pos = `${epoch}-${last}`;
    this.position = null;
  }

  /** One entry read: fields e, p, m, d (fan-publish.lua). */
  private take(s: Shard, id: string, fields: string[]): void {
    const epoch = fields[1]!;
    const previous = fields[3]!;
    const members = fields[5]!;
    const json = fields[7]!;
    const gap = epoch !== s.epoch || previous !== s.last;
    this.moveTo(s, epoch, id);
    if (gap) this.gap(s.index);
    if (this.channels.size > 0) this.deliver(members, json);
    if (s.sending > 0) {
      s.marks.set(id, this.here());
      if (s.marks.size > MAX_MARKS) s.marks.delete(s.marks.keys().next().value!);
    }
    if (s.waiters.length > 0) this.settle(s);
  }

  private deliver(members: string, json: string): void {
    let event: E | undefined;
    let id: string | undefined;
    let start = 1;
    for (let end = members.indexOf('\n', start); end !== -1; start = end + 1, end = members.indexOf('\n', start)) {
      const channel = members.slice(start, end);
      const st = this.channels.get(channel);
      if (st === undefined) continue;
      if (event === undefined) {
        try {
          event = JSON.parse(json) as E;
        } catch (error) {
          this.o.onListenerError(error, channel);
          return;
        }
      }
      id ??= this.here();
      st.last = id;
      const entry: BusEntry<E> = { id, channel, event, json };
      for (const listener of [...st.listeners]) {
        try {
          listener(entry);
        } catch (error) {
          this.o.onListenerError(error, channel);
        }
      }
    }
  }

  /** Every fanned channel's listeners start over (Bus.subscribe's onGap). */
  private gap(shard: number): void {
    const error = new FanGapError(shard);
    for (const [channel, st] of [...this.channels]) {
      st.last = null;
      this.o.onListenerError(error, channel);
      for (const gap of [...st.gaps]) {
        try {
          gap();
        } catch (err) {
          this.o.onListenerError(err, channel);
        }
      }
    }
  }

  /** The node's position right after the entry just published, once the reader has read it. */
  private readBack(s: Shard, epoch: string, id: string): Promise<string> {
    const mark = s.marks.get(id);
    if (mark !== undefined && s.epoch === epoch) {
      s.marks.delete(id);
      return Promise.resolve(mark);
    }
    const pos = parseId(`${epoch}-${id}`)!;
    return this.wait(s, pos, READ_BACK_MS).then((reached) => {
      if (reached) {
        const m = s.marks.get(id);
        s.marks.delete(id);
        return m ?? this.here();
      }
      // Not read back (the reader is cut off): the node's position with this entry in its shard.
      return this.shards.map((x) => (x === s ? `${epoch}-${id}` : x.pos)).join('.');
    });
  }

  private sent(s: Shard): void {
    s.sending -= 1;
    if (s.sending === 0) s.marks.clear();
  }

  /** Resolves true once the shard's reader is at or past `pos`, false if it cannot get there. */
  private reach(s: Shard, pos: Position): Promise<boolean> {
    return this.wait(s, pos, REACH_MS);
  }

  private wait(s: Shard, pos: Position, ms: number): Promise<boolean> {
    if (s.epoch !== pos.epoch) return Promise.resolve(false);
    if (compare(s.ms, s.seq, pos.ms, pos.seq) >= 0) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        epoch: pos.epoch,
        ms: pos.ms,
        seq: pos.seq,
        done: (reached) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => {
        const i = s.waiters.indexOf(waiter);
        if (i !== -1) s.waiters.splice(i, 1);
        resolve(false);
      }, ms);
      s.waiters.push(waiter);
    });
  }

  /** Waiters whose position the reader reached (or whose epoch it left) are done. */
  private settle(s: Shard): void {
    const keep: Waiter[] = [];
    for (const w of s.waiters) {
      if (w.epoch !== s.epoch) w.done(false);
      else if (compare(s.ms, s.seq, w.ms, w.seq) >= 0) w.done(true);
      else keep.push(w);
    }
    s.waiters = keep;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
