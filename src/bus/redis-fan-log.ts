/**
 * The fan log: event streams for channels that receive most events together (a GROUP message
 * reaches every member's own channel), at a Redis cost per event independent of how many
 * channels it is for. docs/bus.md ("The fan log") has the design; in short:
 *
 *   publishMany([u1..un], e, key) ──EVALSHA fan-publish.lua──> XADD {fan:k}:s  e, p, m=u1..un, d=e
 *                                      (k = hash(key) mod shards)  PUBLISH {fan:k}:live  the same
 *   every node: subscribed to every shard's live channel ──> take(entry): for each of u1..un with
 *               a listener here, the listener gets the entry, its id the node's position
 *
 * The push costs Redis one write per node and no command (a blocking XREAD per node and entry
 * cost it a read, a command and a wake-up each). The stream is read only to catch up: after the
 * subscription is made (the start, a lost link, a failover) and when a pushed entry does not
 * follow the last one taken (its `p`), from the last entry taken to the stream's end; pushes that
 * arrive meanwhile wait, and those the read covered are dropped.
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
 * Gaps: an entry whose `p` is not the shard's last entry seen, or of another epoch, even after
 * a catch-up read, means entries are gone (a failover lost them, or the shard's history was
 * dropped): every listener's onGap runs, and delivery continues from that entry.
 */
import { refreshTopology, type RedisClient } from '../redis/client.ts';
import { defineScript } from '../redis/scripts.ts';
import { compare, newEpoch, parseId, type Position } from './redis-event-ids.ts';
import { LiveLinks } from './redis-live.ts';
import { Resubscriber } from './redis-resubscribe.ts';
import type { BusEntry, Listener, ReadSinceResult } from './types.ts';

export interface RedisFanLogOptions {
  /** Connection for scripts and catch-up reads; subscriber links are opened from it. */
  redis: RedisClient;
  nodeId: string;
  /** Sharded pub/sub: SPUBLISH / SSUBSCRIBE (Redis 7) instead of PUBLISH / SUBSCRIBE. */
  sharded: boolean;
  keyPrefix: string;
  shards: number;
  maxAgeMs: number;
  /** Entries a shard keeps at most (approximately): its memory bound. */
  maxEntries: number;
  /** One publish per key on its way at a time (a Redis Cluster; see RedisEventStreamsOptions.serial). */
  serial: boolean;
  /** Runs a publish, trying again through a Cluster failover (redis-event-streams.ts). */
  retry: <T>(run: () => Promise<T>) => Promise<T>;
  now: (() => number) | undefined;
  onListenerError: (error: unknown, channel: string) => void;
}

/** Live delivery of fanned channels skipped entries that can no longer be read back. */
export class FanGapError extends Error {
  constructor(shard: number) {
    super(`fan shard ${shard} lost entries before this node read them (a Redis failover lost them, or the shard's history was dropped)`);
    this.name = 'FanGapError';
  }
}

interface Shard {
  index: number;
  stream: string;
  meta: string;
  /** The shard's pub/sub channel. */
  live: string;
  /** The last entry read: its epoch and id ('0-0' in an empty epoch); '' before the head. */
  epoch: string;
  last: string;
  ms: number;
  seq: number;
  /** `${epoch}-${last}`: this shard's part of the node's position. */
  pos: string;
  /** The head is known: pushes can be taken. */
  known: boolean;
  /** Subscribed to `live` (false from a lost link until it is subscribed again). */
  subscribed: boolean;
  /** A catch-up read is on its way: pushes wait in `pending`. */
  catching: boolean;
  /** Pushes (raw) waiting for the head or a catch-up read, in arrival order. */
  pending: string[];
  /**
   * The catch-up must read once more when its read ends: pushes were dropped from `pending`
   * (over PENDING_MAX), or the shard was subscribed again while the read was on its way.
   */
  again: boolean;
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
/** Pushes kept while a catch-up read is on its way; past it they are read from the stream. */
const PENDING_MAX = 10_000;
/** Entries per catch-up read. */
const CATCH_UP_COUNT = 1024;
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
  private readonly byLive = new Map<string, Shard>();
  private readonly links: LiveLinks;
  private readonly lost: Resubscriber<Shard>;
  private readonly publishMode: string;
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
    this.publishMode = o.sharded ? 'sharded' : '';
    this.shards = Array.from({ length: o.shards }, (_, index) => {
      const base = `${o.keyPrefix}bus:{fan:${index}}`;
      const shard: Shard = { index, stream: `${base}:s`, meta: `${base}:m`, live: `${base}:live`, epoch: '', last: '', ms: 0, seq: 0, pos: '', known: false, subscribed: false, catching: false, pending: [], again: false, marks: new Map(), sending: 0, waiters: [] };
      this.byLive.set(shard.live, shard);
      return shard;
    });
    this.links = new LiveLinks({
      redis: o.redis,
      name: `${o.nodeId}:fan:sub`,
      sharded: o.sharded,
      onMessage: (live, message) => {
        const s = this.byLive.get(live);
        if (s !== undefined) this.onPush(s, message);
      },
      onLost: (lives) => this.onLost(lives),
    });
    this.lost = new Resubscriber<Shard>({
      refresh: () => refreshTopology(this.redis),
      current: () => !this.closed,
      resume: (s) => this.resume(s),
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
      this.redis.busFanPublish(shard.stream, shard.meta, newEpoch(), json, members, this.nowArg(), String(this.o.maxAgeMs), String(this.o.maxEntries), shard.live, this.publishMode);
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
    this.lost.close();
    this.links.close();
    for (const s of this.shards) {
      s.pending = [];
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

  /**
   * Subscribes to the shard's pushes, then learns its position (fixing an empty epoch): every
   * entry after that position is pushed, and pushes at or before it are dropped.
   */
  private async start(s: Shard): Promise<void> {
    for (let failures = 0; !this.closed; failures += 1) {
      try {
        if (!s.subscribed) {
          await this.links.subscribe(s.live);
          s.subscribed = true;
        }
        const [epoch, last] = await this.redis.busFanHead(s.stream, s.meta, newEpoch());
        this.moveTo(s, epoch, last);
        s.known = true;
        // Entries published between the subscription and the head, pushed before the head's
        // answer came, wait in pending: the catch-up drops them or takes what follows.
        void this.catchUp(s);
        return;
      } catch {
        await sleep(Math.min(1000, 25 * 2 ** failures));
      }
    }
  }

  /** A push: `<epoch> <id> <previous id>` then fields m and d (fan-publish.lua). */
  private onPush(s: Shard, message: string): void {
    if (!s.known || s.catching) {
      if (s.pending.length < PENDING_MAX) s.pending.push(message);
      else s.again = true;
      return;
    }
    if (!this.takePush(s, message, false)) {
      // It does not follow the last entry taken: read what lies between (entries this node
      // missed), then take it, or report the gap if they are gone.
      s.pending.push(message);
      void this.catchUp(s);
    }
  }

  /**
   * Takes a push that follows the last entry taken (or, with `force`, any push after it: a gap
   * then), drops one at or before it; false when it does not follow and `force` is off.
   */
  private takePush(s: Shard, message: string, force: boolean): boolean {
    const nl = message.indexOf('\n');
    const sp1 = message.indexOf(' ');
    const sp2 = message.indexOf(' ', sp1 + 1);
    const end = message.lastIndexOf('\n');
    if (nl === -1 || sp1 === -1 || sp2 === -1 || sp2 > nl || end === nl) return true; // not ours: ignored
    const epoch = message.slice(0, sp1);
    const id = message.slice(sp1 + 1, sp2);
    const previous = message.slice(sp2 + 1, nl);
    if (epoch === s.epoch && previous === s.last) {
      this.take(s, id, epoch, previous, message.slice(nl, end + 1), message.slice(end + 1));
      return true;
    }
    if (epoch === s.epoch) {
      const pos = parseId(`0-${id}`);
      if (pos === null || compare(pos.ms, pos.seq, s.ms, s.seq) <= 0) return true; // taken already
    }
    if (!force) return false;
    this.take(s, id, epoch, previous, message.slice(nl, end + 1), message.slice(end + 1));
    return true;
  }

  /**
   * Reads the shard from the last entry taken to its end (a bounded batch at a time), taking
   * each entry, then the pushes that waited: those the read covered are dropped, the rest
   * follow it (or are gaps: entries that are gone). One at a time per shard; a failed read is
   * tried again while the shard is subscribed.
   */
  private async catchUp(s: Shard): Promise<void> {
    if (s.catching || this.closed) return;
    s.catching = true;
    try {
      for (let failures = 0; ; ) {
        if (this.closed || !s.subscribed) return;
        s.again = false;
        try {
          const reply = (await this.redis.xread('COUNT', CATCH_UP_COUNT, 'STREAMS', s.stream, s.last)) as Array<[string, Array<[string, string[]]>]> | null;
          failures = 0;
          let read = 0;
          for (const [, entries] of reply ?? []) {
            for (const [id, f] of entries) {
              read += 1;
              this.take(s, id, f[1]!, f[3]!, f[5]!, f[7]!);
            }
          }
          if (read < CATCH_UP_COUNT && !s.again) break;
        } catch {
          failures += 1;
          await sleep(Math.min(1000, 25 * 2 ** failures));
        }
      }
      if (this.closed || !s.subscribed) return;
      const pending = s.pending;
      s.pending = [];
      for (const message of pending) this.takePush(s, message, true);
    } finally {
      s.catching = false;
    }
  }

  /** Subscriber links closed or moved: their shards stop taking pushes until subscribed again. */
  private onLost(lives: string[]): void {
    for (const live of lives) {
      const s = this.byLive.get(live);
      if (s === undefined || !s.subscribed) continue;
      s.subscribed = false;
      s.pending = [];
      this.lost.add(s);
    }
  }

  /** Subscribes a lost shard again, then reads what it missed. */
  private async resume(s: Shard): Promise<boolean> {
    if (!s.subscribed) {
      try {
        await this.links.subscribe(s.live);
      } catch {
        return false;
      }
      s.subscribed = true;
    }
    // Not known yet: start() reads after the head. A catch-up on its way reads once more, after
    // this subscription.
    if (!s.known) return true;
    if (s.catching) s.again = true;
    else await this.catchUp(s);
    return true;
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

  /** One entry, pushed or read: its epoch, previous id, channels (field m) and JSON (field d). */
  private take(s: Shard, id: string, epoch: string, previous: string, members: string, json: string): void {
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
