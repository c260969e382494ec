/**
 * The subscriber connections of the Redis bus: one per Redis node that serves a subscribed
 * channel (one in all on a single Redis; one per master on a Redis Cluster).
 *
 *   subscribe(live) ──> node serving live's slot ──> its link (opened on first use) ──SUBSCRIBE / SSUBSCRIBE
 *   ping(live)      ──> PING on that same link: answered after every message published before it
 *   link closed, or the slot moved elsewhere ──> onLost([live, ...]): the caller subscribes again
 *                                                  (on the new master) and catches up
 *
 * A channel's subscription sits on the node that runs its publishes (both share the channel's
 * hash tag), so the contract's "a listener sees the event before the publish resolves" holds on a
 * Cluster too: the script on that node writes the message to this link before its reply, and a
 * PING here answers after it. Sharded pub/sub (SPUBLISH, Redis 7) keeps each message inside its
 * shard; classic PUBLISH on a Cluster is copied to every node of the cluster bus.
 *
 * Links do not reconnect on their own: a reconnected link could be talking to a demoted master.
 * When one closes, its channels are reported lost, and subscribing them again asks the (refreshed)
 * slot map where they live now. Slot moves while a link stays up (a manual failover, resharding)
 * are found when the Cluster refreshes its slot map (every few seconds, and on MOVED); Redis then
 * also pushes an unsolicited SUNSUBSCRIBE, which ioredis reports as a command queue error, and
 * the link is closed for it.
 */
import type { Redis } from 'ioredis';
import { dedicatedTo, isCluster, nodeKeyOf, refreshTopology, type RedisClient } from '../redis/client.ts';
import { keySlot } from '../redis/slots.ts';

export interface LiveLinksOptions {
  /** The bus's command connection: where the slot map and the options of new links come from. */
  redis: RedisClient;
  /** Name of the link connections (CLIENT LIST). */
  name: string;
  /** SSUBSCRIBE and `smessage` instead of SUBSCRIBE and `message`. */
  sharded: boolean;
  onMessage: (live: string, message: string) => void;
  /** These channels are no longer subscribed anywhere (their link closed, or their slot moved). */
  onLost: (lives: string[]) => void;
}

interface Link {
  node: string;
  conn: Redis;
  lives: Set<string>;
  closed: boolean;
}

export class LiveLinks {
  private readonly links = new Map<string, Link>();
  private readonly byLive = new Map<string, Link>();
  /** The slot of each subscribed channel, for the placement check (computed once). */
  private readonly slots = new Map<string, number>();
  private readonly onRefresh: () => void;
  private closed = false;

  constructor(private readonly o: LiveLinksOptions) {
    this.onRefresh = () => this.checkPlacement();
    if (isCluster(o.redis)) o.redis.on('refresh', this.onRefresh);
  }

  /**
   * Subscribes `live` on the link of the node serving it. Rejects when that cannot be done now
   * (no slot map yet, the node unreachable): the caller tries again later.
   */
  async subscribe(live: string): Promise<void> {
    if (this.closed) throw new Error('bus subscriber closed');
    let node = nodeKeyOf(this.o.redis, live);
    if (node === null) {
      await refreshTopology(this.o.redis);
      node = nodeKeyOf(this.o.redis, live);
      if (node === null) throw new Error(`no Redis node serves ${live} yet`);
    }
    const link = this.links.get(node) ?? this.open(node, live);
    link.lives.add(live);
    this.byLive.set(live, link);
    if (isCluster(this.o.redis)) this.slots.set(live, keySlot(live));
    try {
      await (this.o.sharded ? link.conn.ssubscribe(live) : link.conn.subscribe(live));
    } catch (error) {
      if (this.byLive.get(live) === link) this.byLive.delete(live);
      link.lives.delete(live);
      throw error;
    }
    // Closed while the SUBSCRIBE was on its way: the caller hears of it from onLost, or here.
    if (link.closed) throw new Error(`subscriber link to ${node} closed`);
  }

  unsubscribe(live: string): void {
    const link = this.byLive.get(live);
    if (!link) return;
    this.byLive.delete(live);
    this.slots.delete(live);
    link.lives.delete(live);
    if (link.closed) return;
    (this.o.sharded ? link.conn.sunsubscribe(live) : link.conn.unsubscribe(live)).catch(() => undefined);
  }

  /** Resolves once every message published on `live` before this call has been received. */
  ping(live: string): Promise<void> {
    const link = this.byLive.get(live);
    if (!link || link.closed) return Promise.resolve();
    return link.conn.ping().then(
      () => undefined,
      () => undefined,
    );
  }

  close(): void {
    this.closed = true;
    if (isCluster(this.o.redis)) this.o.redis.off('refresh', this.onRefresh);
    for (const link of this.links.values()) {
      link.closed = true;
      link.conn.disconnect();
    }
    this.links.clear();
    this.byLive.clear();
    this.slots.clear();
  }

  private open(node: string, live: string): Link {
    const conn = dedicatedTo(this.o.redis, live, this.o.name);
    if (!conn) throw new Error(`no Redis node serves ${live} yet`);
    const link: Link = { node, conn, lives: new Set(), closed: false };
    conn.on('error', (error: Error) => {
      // An unsolicited SUNSUBSCRIBE (the slot left this node) is a reply ioredis cannot match.
      if (String(error.message).includes('Command queue state error')) conn.disconnect();
    });
    conn.on('close', () => this.lost(link));
    conn.on(this.o.sharded ? 'smessage' : 'message', (channel: string, message: string) => this.o.onMessage(channel, message));
    this.links.set(node, link);
    return link;
  }

  private lost(link: Link): void {
    if (link.closed) return;
    link.closed = true;
    link.conn.disconnect();
    if (this.links.get(link.node) === link) this.links.delete(link.node);
    const lives = [...link.lives].filter((live) => this.byLive.get(live) === link);
    for (const live of lives) {
      this.byLive.delete(live);
      this.slots.delete(live);
    }
    link.lives.clear();
    if (!this.closed && lives.length > 0) this.o.onLost(lives);
  }

  /** After a slot map refresh: channels whose slot now lives on another node move there. */
  private checkPlacement(): void {
    if (!isCluster(this.o.redis)) return;
    const map = this.o.redis.slots;
    const moved: string[] = [];
    for (const [live, link] of this.byLive) {
      const node = map[this.slots.get(live) ?? keySlot(live)]?.[0];
      if (node !== undefined && node !== link.node) moved.push(live);
    }
    for (const live of moved) this.unsubscribe(live);
    if (moved.length > 0) this.o.onLost(moved);
  }
}
