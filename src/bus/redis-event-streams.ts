/**
 * Event streams on Redis: one stream per channel for history, one pub/sub channel per channel for
 * live delivery, both written by one script (lua/publish.lua) so their orders agree.
 *
 *   publish ──EVALSHA publish.lua──> XADD {ch}:s + HSET {ch}:m + PUBLISH {ch}:live   (atomic)
 *                                                                   │
 *   listeners <── filter: ids above the last delivered <── subscriber connection (one per node)
 *
 * Listeners get every event from the pub/sub copy, whichever node published it: one ordered
 * source. The contract's "on one node, a listener sees an event no later than the publish
 * resolves" holds because a publish on a channel with local listeners (1) waits until the
 * channel's SUBSCRIBE is answered, so a copy will come, and (2) resolves after a PING on the
 * subscriber connection, which answers after every message published before it.
 *
 * Ids: `<epoch>-<ms>-<seq>`, where `<ms>-<seq>` is the stream entry id (its ms is the publish
 * time, from the injected clock or the server's) and the epoch a random decimal token kept in
 * the channel's meta hash. Resume and the window: lua/read-since.lua; a channel's current
 * position, fixing an empty epoch for a channel without history: lua/head.lua.
 *
 * Subscribing is asynchronous on Redis: `readSince` on a channel this bus has just subscribed
 * waits for the SUBSCRIBE to be answered, so the resume recipe (subscribe, then readSince)
 * cannot miss an event published in between. After the subscriber connection comes back from a
 * disconnect, each channel that has delivered an event is caught up from its last delivered id
 * (live copies held back meanwhile, the filter dropping what was already delivered); when that
 * history is gone, `onListenerError` gets a LiveGapError for the channel.
 */
import { randomInt } from 'node:crypto';
import type { Redis } from 'ioredis';
import { defineScript } from '../redis/scripts.ts';
import type { BusEntry, Listener, ReadSinceResult } from './types.ts';

export interface RedisEventStreamsOptions {
  /** Connection for scripts (shared with the work queue). */
  redis: Redis;
  /** Opens the subscriber connection, on the first subscribe. */
  openSubscriber: () => Redis;
  keyPrefix: string;
  maxEventsPerChannel: number;
  maxAgeMs: number;
  /** Injected clock; undefined: the Redis server's clock. */
  now: (() => number) | undefined;
  onListenerError: (error: unknown, channel: string) => void;
}

/** Live delivery of a channel skipped events that can no longer be read back. */
export class LiveGapError extends Error {
  constructor(channel: string) {
    super(`live delivery of ${channel} missed events while disconnected from Redis, and they are no longer held`);
    this.name = 'LiveGapError';
  }
}

interface Position {
  epoch: string;
  ms: number;
  seq: number;
}

interface ChannelState<E> {
  channel: string;
  live: string;
  listeners: Set<Listener<E>>;
  /** Resolves when the SUBSCRIBE was answered (or failed: the ready handler resubscribes). */
  ready: Promise<void>;
  subscribed: boolean;
  last: Position | null;
  /** Live entries held back while a catch-up read runs. */
  held: Array<{ id: string; event: E }> | null;
}

interface EventScripts {
  busPublish(stream: string, meta: string, ...argv: string[]): Promise<[string, string, string]>;
  busReadSince(stream: string, meta: string, ...argv: string[]): Promise<Array<number | string>>;
  busHead(stream: string, meta: string, ...argv: string[]): Promise<[string, string]>;
}

/** `<epoch>-<ms>-<seq>`; 15 digits keep ms and seq exact in Lua's doubles. */
const ID = /^(\d{1,20})-(\d{1,15})-(\d{1,15})$/;

function parseId(id: string): Position | null {
  const m = ID.exec(id);
  return m ? { epoch: m[1]!, ms: Number(m[2]), seq: Number(m[3]) } : null;
}

/** A random decimal token of 16 digits: the epoch of a new history. */
function newEpoch(): string {
  return `${randomInt(10_000_000, 100_000_000)}${String(randomInt(0, 100_000_000)).padStart(8, '0')}`;
}

/** Time-to-live of a channel's keys past its last publish: the window's age plus a margin. */
function ttlOf(maxAgeMs: number): number {
  return maxAgeMs + Math.max(1000, Math.ceil(maxAgeMs / 10));
}

export class RedisEventStreams<E> {
  private readonly redis: Redis & EventScripts;
  private subscriber: Redis | null = null;
  private readonly channels = new Map<string, ChannelState<E>>();
  private readonly byLive = new Map<string, ChannelState<E>>();
  /** Per channel, the last publish held back until its channel's SUBSCRIBE was answered. */
  private readonly gates = new Map<string, Promise<void>>();
  private readonly ttl: string;

  constructor(private readonly o: RedisEventStreamsOptions) {
    defineScript(o.redis, 'busPublish', 'bus/lua/publish.lua', 2);
    defineScript(o.redis, 'busReadSince', 'bus/lua/read-since.lua', 2);
    defineScript(o.redis, 'busHead', 'bus/lua/head.lua', 2);
    this.redis = o.redis as Redis & EventScripts;
    this.ttl = String(ttlOf(o.maxAgeMs));
  }

  publish(channel: string, event: E): Promise<string> {
    const json = JSON.stringify(event);
    if (json === undefined) return Promise.reject(new TypeError('bus events must be JSON values'));
    const state = this.channels.get(channel);
    const gate = this.gates.get(channel) ?? (state && !state.subscribed ? state.ready : undefined);
    // No await before the command: unawaited publishes of one caller reach Redis in call order.
    if (!gate) return this.send(channel, json, event);
    // The channel has local listeners whose SUBSCRIBE is not answered yet: publishing now could
    // miss the pub/sub copy. Wait for it, and queue later publishes of the channel behind.
    let sent!: Promise<string>;
    const next = gate.then(() => void (sent = this.send(channel, json, event)));
    this.gates.set(channel, next);
    void next.then(() => this.gates.get(channel) === next && this.gates.delete(channel));
    return next.then(() => sent);
  }

  subscribe(channel: string, listener: Listener<E>): () => void {
    const state = this.channels.get(channel) ?? this.open(channel);
    // Wrapped, so one function subscribed twice is two subscriptions with two unsubscribes.
    const own: Listener<E> = (entry) => listener(entry);
    state.listeners.add(own);
    return () => {
      state.listeners.delete(own);
      if (state.listeners.size > 0 || this.channels.get(channel) !== state) return;
      this.channels.delete(channel);
      this.byLive.delete(state.live);
      this.subscriber?.unsubscribe(state.live).catch(() => undefined);
    };
  }

  private send(channel: string, json: string, event: E): Promise<string> {
    const k = this.keys(channel);
    return this.redis
      .busPublish(k.stream, k.meta, newEpoch(), json, this.nowArg(), String(this.o.maxEventsPerChannel), String(this.o.maxAgeMs), this.ttl, k.live)
      .then(async ([epoch, offset, previous]) => {
        const id = `${epoch}-${offset}`;
        const state = this.channels.get(channel);
        if (state) await this.delivered(state, id, `${epoch}-${previous}`, event);
        return id;
      });
  }

  /**
   * Resolves once this node's listeners have seen the event just published. They get it from the
   * pub/sub copy (one ordered source for every publisher); a PING on the subscriber connection
   * answers after every message published before it, so after the copy. Without a subscription
   * (refused, or the connection is down) no copy comes: the event goes to a running catch-up, or
   * is delivered from here when it directly follows the last delivered one (or none was), and
   * is otherwise left to the catch-up after the reconnect, which replays in order from there.
   */
  private async delivered(state: ChannelState<E>, id: string, previous: string, event: E): Promise<void> {
    if (state.subscribed) await this.subscriber?.ping().catch(() => undefined);
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
      events.push({ id: `${pos.epoch}-${String(reply[i])}`, channel, event: JSON.parse(String(reply[i + 1])) as E });
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

  /** Drops every listener and closes the subscriber connection. */
  close(): void {
    this.channels.clear();
    this.byLive.clear();
    this.subscriber?.disconnect();
    this.subscriber = null;
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
    const sub = this.ensureSubscriber();
    const live = this.keys(channel).live;
    const state: ChannelState<E> = { channel, live, listeners: new Set(), ready: Promise.resolve(), subscribed: false, last: null, held: null };
    this.subscribeLive(sub, state);
    this.channels.set(channel, state);
    this.byLive.set(live, state);
    return state;
  }

  private ensureSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    const sub = this.o.openSubscriber();
    sub.on('error', () => undefined); // ioredis reconnects; the ready handler catches up
    // A PING must go out as soon as it is called, not wait in an auto-pipeline.
    sub.options.enableAutoPipelining = false;
    sub.on('close', () => {
      for (const state of this.channels.values()) state.subscribed = false;
    });
    let connections = 0;
    sub.on('ready', () => {
      connections += 1;
      // The first connection: send again a SUBSCRIBE refused while Redis was unreachable. A
      // reconnection: resubscribe, and replay what each channel missed meanwhile.
      if (connections === 1) this.retrySubscribe(sub);
      else void this.catchUp(sub);
    });
    sub.on('message', (live: string, message: string) => this.onMessage(live, message));
    this.subscriber = sub;
    return sub;
  }

  private subscribeLive(sub: Redis, state: ChannelState<E>): void {
    state.ready = sub.subscribe(state.live).then(
      () => void (state.subscribed = true),
      () => undefined,
    );
  }

  private retrySubscribe(sub: Redis): void {
    for (const state of this.channels.values()) if (!state.subscribed) this.subscribeLive(sub, state);
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
    if (last && last.epoch === pos.epoch && (pos.ms < last.ms || (pos.ms === last.ms && pos.seq <= last.seq))) return;
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

  /** After a reconnect: resubscribe, then replay what each channel missed, then the held-back. */
  private async catchUp(sub: Redis): Promise<void> {
    const states = [...this.channels.values()];
    for (const state of states) state.held ??= [];
    await Promise.all(
      states.map(async (state) => {
        try {
          if (this.channels.get(state.channel) !== state) return;
          const subscribed = sub.subscribe(state.live).then(() => void (state.subscribed = true));
          state.ready = subscribed.catch(() => undefined);
          await subscribed;
          const last = state.last;
          if (last) {
            const missed = await this.readSince(state.channel, `${last.epoch}-${last.ms}-${last.seq}`);
            if (missed.reset) this.o.onListenerError(new LiveGapError(state.channel), state.channel);
            else for (const e of missed.events) this.accept(state, e.id, e.event);
          }
        } catch (error) {
          this.o.onListenerError(error, state.channel);
        } finally {
          const held = state.held ?? [];
          state.held = null;
          for (const e of held) this.accept(state, e.id, e.event);
        }
      }),
    );
  }
}
