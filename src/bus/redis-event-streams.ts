/**
 * Event streams on Redis: one stream per channel for history, one pub/sub channel per channel for
 * live delivery, both written by one script (lua/publish.lua) so their orders agree.
 *
 *   publish ──EVALSHA publish.lua──> XADD {ch}:s + HSET {ch}:m + (S)PUBLISH {ch}:live   (atomic)
 *                                                                   │
 *   listeners <── filter: ids above the last delivered <── subscriber link of the channel's Redis
 *                                                          node (redis-live.ts)
 *
 * Listeners get every event from the pub/sub copy, whichever node published it: one ordered
 * source. The contract's "on one node, a listener sees an event no later than the publish
 * resolves" holds because a publish on a channel with local listeners (1) waits until the
 * channel's SUBSCRIBE is answered, so a copy will come, and (2) resolves after a PING on the
 * channel's subscriber link, which answers after every message published before it (on a Redis
 * Cluster the link is to the master that ran the publish: redis-live.ts).
 *
 * Ids: `<epoch>-<ms>-<seq>`, where `<ms>-<seq>` is the stream entry id (its ms is the publish
 * time, from the injected clock or the server's) and the epoch a random decimal token kept in
 * the channel's meta hash. Resume and the window: lua/read-since.lua; a channel's current
 * position, fixing an empty epoch for a channel without history: lua/head.lua.
 *
 * Subscribing is asynchronous on Redis: `readSince` on a channel this bus has just subscribed
 * waits for the SUBSCRIBE to be answered, so the resume recipe (subscribe, then readSince)
 * cannot miss an event published in between. When a channel's subscription is lost (its link
 * closed: a disconnect, a failover; or its slot moved), it is subscribed again, on the node that
 * serves it now, and, if it has delivered an event, caught up from its last delivered id (live
 * copies held back meanwhile, the filter dropping what was already delivered); when that history
 * is gone, `onListenerError` gets a LiveGapError for the channel. Failed attempts are repeated
 * with a backoff (100 ms doubling to 1 s).
 */
import { refreshTopology, type RedisClient } from '../redis/client.ts';
import { defineScript } from '../redis/scripts.ts';
import { compare, newEpoch, parseId, ttlOf, type Position } from './redis-event-ids.ts';
import { LiveLinks } from './redis-live.ts';
import { Resubscriber } from './redis-resubscribe.ts';
import type { BusEntry, Listener, ReadSinceResult } from './types.ts';

export interface RedisEventStreamsOptions {
  /** Connection for scripts (shared with the work queue); subscriber links are opened from it. */
  redis: RedisClient;
  /** Name of the subscriber links (CLIENT LIST). */
  subscriberName: string;
  /** Sharded pub/sub: SPUBLISH / SSUBSCRIBE (Redis 7) instead of PUBLISH / SUBSCRIBE. */
  sharded: boolean;
  /**
   * At most one publish per channel on its way at a time (a Redis Cluster). ioredis retries a
   * Cluster command that met a dead master on its own, after a delay, and commands retried that
   * way can overtake one another; one publish in flight per channel keeps the channel's order
   * through a failover. On one server a reconnect resends in order, and publishes pipeline.
   */
  serial: boolean;
  keyPrefix: string;
  maxEventsPerChannel: number;
  maxAgeMs: number;
  /** Injected clock; undefined: the Redis server's clock. */
  now: (() => number) | undefined;
  onListenerError: (error: unknown, channel: string) => void;
}

/**
 * How long a publish on a Redis Cluster keeps trying through a failover: a replica is promoted
 * after cluster-node-timeout (15 s by default) and an election; past this, the event is lost to
 * live delivery and the channel's listeners are told (a gap) when they resubscribe.
 */
export const PUBLISH_FAILOVER_MS = 20_000;
/** Errors of a Cluster command that never ran: slots moving, a master down, the cluster down. */
const FAILOVER_ERROR = /Too many Cluster redirections|CLUSTERDOWN|TRYAGAIN|Connection is closed|Redis Cluster unreachable|ECONNREFUSED|Failed to refresh slots cache/;

export async function retryThroughFailover<T>(run: () => Promise<T>, budgetMs: number): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let delay = 100; ; delay = Math.min(1000, delay * 2)) {
    try {
      return await run();
    } catch (error) {
      if (!FAILOVER_ERROR.test(String(error)) || Date.now() + delay > deadline) throw error;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** Live delivery of a channel skipped events that can no longer be read back. */
export class LiveGapError extends Error {
  constructor(channel: string) {
    super(`live delivery of ${channel} missed events while disconnected from Redis, and they are no longer held`);
    this.name = 'LiveGapError';
  }
}

interface ChannelState<E> {
  channel: string;
  live: string;
  listeners: Set<Listener<E>>;
  /** The listeners' gap callbacks (Bus.subscribe). */
  gaps: Set<() => void>;
  /** Resolves when the SUBSCRIBE was answered (or failed: it is tried again later). */
  ready: Promise<void>;
  subscribed: boolean;
  last: Position | null;
  /** Live entries held back while the channel is subscribed again and caught up. */
  held: Array<{ id: string; event: E }> | null;
}

interface EventScripts {
  busPublish(stream: string, meta: string, ...argv: string[]): Promise<[string, string, string]>;
  busReadSince(stream: string, meta: string, ...argv: string[]): Promise<Array<number | string>>;
  busHead(stream: string, meta: string, ...argv: string[]): Promise<[string, string]>;
}

export class RedisEventStreams<E> {
  private readonly redis: RedisClient & EventScripts;
  private readonly links: LiveLinks;
  private readonly channels = new Map<string, ChannelState<E>>();
  private readonly byLive = new Map<string, ChannelState<E>>();
  /** Per channel, the last publish held back until its channel's SUBSCRIBE was answered. */
  private readonly gates = new Map<string, Promise<void>>();
  private readonly ttl: string;
  private readonly publishMode: string;
  /** Subscribes lost channels again and catches them up (resume), with a backoff. */
  private readonly lost: Resubscriber<ChannelState<E>>;
  private closed = false;

  constructor(private readonly o: RedisEventStreamsOptions) {
    defineScript(o.redis, 'busPublish', 'bus/lua/publish.lua', 2);
    defineScript(o.redis, 'busReadSince', 'bus/lua/read-since.lua', 2);
    defineScript(o.redis, 'busHead', 'bus/lua/head.lua', 2);
    this.redis = o.redis as RedisClient & EventScripts;
    this.ttl = String(ttlOf(o.maxAgeMs));
    this.publishMode = o.sharded ? 'sharded' : '';
    this.lost = new Resubscriber<ChannelState<E>>({
      refresh: () => refreshTopology(this.redis),
      current: (state) => this.current(state) && !this.closed,
      resume: (state) => this.resume(state),
    });
    this.links = new LiveLinks({
      redis: o.redis,
      name: o.subscriberName,
      sharded: o.sharded,
      onMessage: (live, message) => this.onMessage(live, message),
      onLost: (lives) => this.onLost(lives),
    });
  }

  publish(channel: string, event: E): Promise<string> {
    const json = JSON.stringify(event);
    if (json === undefined) return Promise.reject(new TypeError('bus events must be JSON values'));
    const state = this.channels.get(channel);
    const gate = this.gates.get(channel) ?? (state && !state.subscribed ? state.ready : undefined);
    // No await before the command: unawaited publishes of one caller reach Redis in call order.
    if (!gate) {
      const sent = this.send(channel, json, event);
      if (this.o.serial) this.gate(channel, sent.reply);
      return sent.done;
    }
    // The channel has local listeners whose SUBSCRIBE is not answered yet: publishing now could
    // miss the pub/sub copy. Wait for it, and queue later publishes of the channel behind. On a
    // Cluster, also wait for the channel's publish in flight (see RedisEventStreamsOptions.serial).
    let done!: Promise<string>;
    const next = gate.then(() => {
      const sent = this.send(channel, json, event);
      done = sent.done;
      return this.o.serial ? sent.reply : undefined;
    });
    this.gate(channel, next);
    return next.then(
      () => done,
      () => done,
    );
  }

  /** Later publishes of `channel` wait for `p` to settle. */
  private gate(channel: string, p: Promise<unknown>): void {
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    this.gates.set(channel, settled);
    void settled.then(() => this.gates.get(channel) === settled && this.gates.delete(channel));
  }

  publishMany(channels: readonly string[], event: E): Promise<string[]> {
    return Promise.all(channels.map((channel) => this.publish(channel, event)));
  }

  subscribe(channel: string, listener: Listener<E>, onGap?: () => void): () => void {
    const state = this.channels.get(channel) ?? this.open(channel);
    // Wrapped, so one function subscribed twice is two subscriptions with two unsubscribes.
    const own: Listener<E> = (entry) => listener(entry);
    const gap = onGap ? (): void => onGap() : null;
    state.listeners.add(own);
    if (gap) state.gaps.add(gap);
    return () => {
      state.listeners.delete(own);
      if (gap) state.gaps.delete(gap);
      if (state.listeners.size > 0 || this.channels.get(channel) !== state) return;
      this.channels.delete(channel);
      this.byLive.delete(state.live);
      this.lost.delete(state);
      this.links.unsubscribe(state.live);
    };
  }

  /** Runs publish.lua: `reply` settles with the script, `done` once local listeners have the event. */
  private send(channel: string, json: string, event: E): { reply: Promise<unknown>; done: Promise<string> } {
    const k = this.keys(channel);
    const run = (): Promise<[string, string, string]> =>
      this.redis.busPublish(k.stream, k.meta, newEpoch(), json, this.nowArg(), String(this.o.maxEventsPerChannel), String(this.o.maxAgeMs), this.ttl, k.live, this.publishMode);
    // On a Cluster, a publish that meets a master being replaced is tried again until a replica
    // took over: the channel's later publishes wait behind it (serial), so order holds, and the
    // event is not lost to the failover (the message it tells of is stored already).
    const reply = this.o.serial ? retryThroughFailover(run, PUBLISH_FAILOVER_MS) : run();
    const done = reply.then(async ([epoch, offset, previous]) => {
      const id = `${epoch}-${offset}`;
      const state = this.channels.get(channel);
      if (state) await this.delivered(state, id, `${epoch}-${previous}`, event);
      return id;
    });
    return { reply, done };
  }

  /**
   * Resolves once this node's listeners have seen the event just published. They get it from the
   * pub/sub copy (one ordered source for every publisher); a PING on the channel's subscriber
   * link answers after every message published before it, so after the copy. Without a
   * subscription (refused, or the link is down) no copy comes: the event goes to a running
   * catch-up, or is delivered from here when it directly follows the last delivered one (or none
   * was), and is otherwise left to the catch-up after the resubscription, which replays in order
   * from there.
   */
  private async delivered(state: ChannelState<E>, id: string, previous: string, event: E): Promise<void> {
    if (state.subscribed) await this.links.ping(state.live);
    if (state.subscribed || this.channels.get(state.channel) !== state) return;
    const last = state.last;
    if (state.held) state.held.push({ id, event });
    else if (!last || previous === `${last.epoch}-${last.ms}-${last.seq}`) this.accept(state, id, event);
  }

  async readSince(channel: string, lastEventId: string): Promise<ReadSinceResult<E>> {
    const pos = parseId(lastEventId);
    if (!pos) return { reset: true };
    const state = this.channels.get(channel);
    if (state) await state.ready;
    const k = this.keys(channel);
    const reply = await this.redis.busReadSince(k.stream, k.meta, pos.epoch, `${pos.ms}-${pos.seq}`, this.nowArg(), String(this.o.maxAgeMs));
    if (reply[0] !== 1) return { reset: true };
    const events: BusEntry<E>[] = [];
    for (let i = 1; i < reply.length; i += 2) {
      const json = String(reply[i + 1]);
      events.push({ id: `${pos.epoch}-${String(reply[i])}`, channel, event: JSON.parse(json) as E, json });
    }
    return { reset: false, events };
  }

  /**
   * The channel's epoch and newest entry id, `<epoch>-0-0` for an empty epoch (lua/head.lua).
   * Like readSince, waits for a SUBSCRIBE of this channel in flight: an event published after
   * the answer then reaches the listener.
   */
  async head(channel: string): Promise<string> {
    const state = this.channels.get(channel);
    if (state) await state.ready;
    const k = this.keys(channel);
    const [epoch, entry] = await this.redis.busHead(k.stream, k.meta, newEpoch(), this.ttl);
    return `${epoch}-${entry}`;
  }

  /** Drops every listener and closes the subscriber links. */
  close(): void {
    this.closed = true;
    this.lost.close();
    this.channels.clear();
    this.byLive.clear();
    this.links.close();
  }

  /** Keys of a channel; the hash tag keeps them in one slot of a Redis Cluster. */
  private keys(channel: string): { stream: string; meta: string; live: string } {
    const base = `${this.o.keyPrefix}bus:{${channel}}`;
    return { stream: `${base}:s`, meta: `${base}:m`, live: `${base}:live` };
  }

  private nowArg(): string {
    return this.o.now ? String(Math.floor(this.o.now())) : '';
  }

  private open(channel: string): ChannelState<E> {
    const live = this.keys(channel).live;
    const state: ChannelState<E> = { channel, live, listeners: new Set(), gaps: new Set(), ready: Promise.resolve(), subscribed: false, last: null, held: null };
    this.channels.set(channel, state);
    this.byLive.set(live, state);
    state.ready = this.links.subscribe(live).then(
      () => void (state.subscribed = true),
      () => this.onLost([live]),
    );
    return state;
  }

  private current(state: ChannelState<E>): boolean {
    return this.channels.get(state.channel) === state;
  }

  private onMessage(live: string, message: string): void {
    const state = this.byLive.get(live);
    if (!state) return;
    const cut = message.indexOf('\n');
    let event: E;
    try {
      event = JSON.parse(message.slice(cut + 1)) as E;
    } catch (error) {
      this.o.onListenerError(error, state.channel);
      return;
    }
    const id = message.slice(0, cut);
    if (state.held) state.held.push({ id, event });
    else this.accept(state, id, event);
  }

  /** Delivers the entry unless an id at or above it was delivered already (see module comment). */
  private accept(state: ChannelState<E>, id: string, event: E): void {
    const pos = parseId(id);
    if (!pos) return;
    const last = state.last;
    if (last && last.epoch === pos.epoch && compare(pos.ms, pos.seq, last.ms, last.seq) <= 0) return;
    state.last = pos;
    const entry: BusEntry<E> = { id, channel: state.channel, event };
    // A copy: a listener may unsubscribe (itself or another) while we iterate.
    for (const listener of [...state.listeners]) {
      try {
        listener(entry);
      } catch (error) {
        this.o.onListenerError(error, state.channel);
      }
    }
  }

  /**
   * Live delivery of the channel skipped events it cannot deliver: its listeners start over
   * (Bus.subscribe's onGap), and delivery continues from the next event, whatever its epoch.
   */
  private gap(state: ChannelState<E>, error: unknown): void {
    this.o.onListenerError(error, state.channel);
    state.last = null;
    for (const gap of [...state.gaps]) {
      try {
        gap();
      } catch (err) {
        this.o.onListenerError(err, state.channel);
      }
    }
  }

  /** These channels' subscriptions were lost (link closed, slot moved, SUBSCRIBE refused). */
  private onLost(lives: string[]): void {
    for (const live of lives) {
      const state = this.byLive.get(live);
      if (!state) continue;
      state.subscribed = false;
      this.lost.add(state);
    }
  }

  /** Resubscribes one channel, then replays what it missed, then the held-back; false: try again. */
  private async resume(state: ChannelState<E>): Promise<boolean> {
    if (!this.current(state) || this.closed) return true;
    state.held ??= [];
    const subscribed = this.links.subscribe(state.live).then(() => void (state.subscribed = true));
    state.ready = subscribed.catch(() => undefined);
    try {
      await subscribed;
    } catch {
      // Still unreachable: held entries wait for the next attempt, which replays from `last`.
      return false;
    }
    try {
      // Replay from the last delivered event; with none delivered yet, from the oldest one held
      // (this node's own publishes wait here while unsubscribed): what others published after it
      // was not heard either.
      let from = state.last ? `${state.last.epoch}-${state.last.ms}-${state.last.seq}` : null;
      if (!from && state.held && state.held.length > 0) {
        const first = oldest(state.held);
        this.accept(state, first.id, first.event);
        from = first.id;
      }
      if (from) {
        const missed = await this.readSince(state.channel, from);
        if (missed.reset) this.gap(state, new LiveGapError(state.channel));
        else for (const e of missed.events) this.accept(state, e.id, e.event);
      }
    } catch (error) {
      // What was missed cannot be read: as good as lost for live delivery.
      this.gap(state, error);
    } finally {
      const held = state.held ?? [];
      state.held = null;
      for (const e of held) this.accept(state, e.id, e.event);
    }
    return true;
  }
}

/** The held entry with the lowest position in the first entry's epoch. */
function oldest<E>(held: readonly { id: string; event: E }[]): { id: string; event: E } {
  let best = held[0]!;
  let bestPos = parseId(best.id);
  for (const e of held) {
    const pos = parseId(e.id);
    if (!pos || !bestPos || pos.epoch !== bestPos.epoch) continue;
    if (compare(pos.ms, pos.seq, bestPos.ms, bestPos.seq) < 0) {
      best = e;
      bestPos = pos;
    }
  }
  return best;
}
