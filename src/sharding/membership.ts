/**
 * Cluster membership in Redis: who is alive, as every node sees it.
 *
 *   node ──beat every heartbeatMs──► membership.lua ──► ZSET id→expiry (+ HASH id→info), both {ring}
 *                                         │  drops expired ids, PUBLISHes on any change
 *   every node ◄──── pub/sub notice ──────┘  └─► re-reads the live set at once
 *
 * Bound: a node that stops beating at t has expiry t + ttlMs (Redis clock, so node clocks do not
 * matter). Every other node beats every heartbeatMs and each beat prunes expired ids, so the
 * first beat after t + ttlMs removes it and publishes; a node that misses the notice still
 * re-reads at its own next beat. Hence a dead node leaves every view within ttlMs + heartbeatMs
 * (plus a Redis round trip). A graceful leave() removes the id and publishes at once.
 * ttlMs must be at least 2 × heartbeatMs so that one late beat does not drop a live node.
 *
 * Redis failures: the last view is kept (dropping everyone would route every conversation to
 * this node) and `healthy` turns false until a call succeeds again. Safety never depends on the
 * view: the store's epoch fencing keeps seqs unique while views disagree.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient, RedisFactory } from '../redis/client.ts';
import { defineScript } from '../redis/scripts.ts';
import type { ClaimOwner } from '../store/index.ts';
import { silentLog, type MembershipView, type NodeInfo, type ShardingLog, type ViewChange } from './types.ts';

export interface MembershipOptions {
  redis: RedisFactory;
  /** Prefix of every key and channel (the cluster's RedisSettings.keyPrefix). */
  keyPrefix: string;
  nodeId: string;
  internalUrl: string;
  heartbeatMs: number;
  ttlMs: number;
  log?: ShardingLog;
}

type Mode = 'beat' | 'view' | 'leave';
type MembershipRedis = RedisClient & { chatMembership(zset: string, hash: string, mode: Mode, channel: string, id: string, ttl: string, info: string): Promise<string[]> };

export class Membership {
  readonly self: NodeInfo;
  private readonly redis: MembershipRedis;
  private readonly sub: RedisClient;
  private readonly keys: { zset: string; hash: string; channel: string };
  private readonly listeners = new Set<(change: ViewChange) => void>();
  private readonly log: ShardingLog;
  private current: MembershipView = { version: 0, nodes: [] };
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private left = false;
  private closed = false;
  private ok = false;
  private owners: { view: MembershipView; claims: ClaimOwner } | null = null;

  constructor(private readonly options: MembershipOptions) {
    if (!(options.heartbeatMs >= 10)) throw new RangeError(`membership: heartbeatMs must be at least 10 (got ${options.heartbeatMs})`);
    if (!(options.ttlMs >= 2 * options.heartbeatMs)) throw new RangeError(`membership: ttlMs must be at least 2 × heartbeatMs (got ${options.ttlMs})`);
    this.log = options.log ?? silentLog;
    this.self = { nodeId: options.nodeId, internalUrl: options.internalUrl.replace(/\/+$/, ''), startedAt: Date.now(), instance: randomUUID() };
    const p = options.keyPrefix;
    // One hash tag for both keys: the script takes both, so on a Redis Cluster they share a slot
    // (membership is a few calls per node per second: one slot carries it easily).
    this.keys = { zset: `${p}cluster:{ring}:nodes`, hash: `${p}cluster:{ring}:node-info`, channel: `${p}cluster:membership` };
    this.redis = options.redis('membership') as MembershipRedis;
    this.sub = options.redis('membership-sub');
    defineScript(this.redis, 'chatMembership', 'sharding/membership.lua', 2);
    // ioredis reconnects by itself; without a listener it would print every failure as unhandled.
    for (const conn of [this.redis, this.sub]) conn.on('error', (err: Error) => this.failed(err));
    this.sub.on('message', () => this.refresh());
  }

  /** Registers this node and answers once the first view is known; rejects if Redis cannot be reached. */
  async start(): Promise<void> {
    await this.sub.subscribe(this.keys.channel);
    const previous = await this.step('beat');
    if (previous) this.warnIfTaken(previous);
    this.timer = setInterval(() => this.refresh(), this.options.heartbeatMs);
    this.timer.unref();
  }

  get view(): MembershipView {
    return this.current;
  }

  /** False while the last call to Redis failed: the view may be stale. */
  get healthy(): boolean {
    return this.ok;
  }

  /**
   * This node's instance and every live node's, as owners of Idempotency-Key claims: a claim of an
   * instance out of the view died with it and is taken over by the next retry. A view missing a
   * live node (just joined, not seen yet) only lets a retry re-run early: what the request
   * creates has the same id in both runs, so the store keeps one; a view still holding a dead
   * node delays the take-over to the pending bound.
   */
  claimOwner(): ClaimOwner {
    const view = this.current;
    if (this.owners?.view !== view) {
      const live = view.nodes.map((n) => n.instance);
      if (!live.includes(this.self.instance)) live.push(this.self.instance);
      this.owners = { view, claims: { owner: this.self.instance, live } };
    }
    return this.owners.claims;
  }

  /** Bound on how long a dead node stays in any view. */
  get detectionBoundMs(): number {
    return this.options.ttlMs + this.options.heartbeatMs;
  }

  onChange(listener: (change: ViewChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Re-reads the live set now (and beats, unless left). Calls while one runs are coalesced into
   * one more run after it, so a burst of notices costs two round trips.
   */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.step(this.left ? 'view' : 'beat').catch((err: unknown) => this.failed(err as Error));
      } while (this.again && !this.closed);
    })().finally(() => (this.running = null));
    return this.running;
  }

  /** Graceful leave: out of the live set at once, the others notified; the view keeps refreshing. */
  async leave(): Promise<void> {
    if (this.left || this.closed) return;
    this.left = true;
    await this.running;
    await this.step('leave');
  }

  /** Stops beating and closes the connections. Without leave() first, the others see a crash. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => {});
    this.listeners.clear();
    await Promise.allSettled([this.sub.quit(), this.redis.quit()]);
    this.sub.disconnect();
    this.redis.disconnect();
  }

  /** One script call; answers the previous info of this node if it was live. */
  private async step(mode: Mode): Promise<string> {
    const { zset, hash, channel } = this.keys;
    const reply = await withTimeout(
      this.redis.chatMembership(zset, hash, mode, channel, this.self.nodeId, String(this.options.ttlMs), JSON.stringify(this.self)),
      Math.max(this.options.heartbeatMs, 1000),
    );
    if (!this.ok) this.log.info({ node_id: this.self.nodeId }, 'membership: Redis reachable');
    this.ok = true;
    this.apply(reply.slice(1));
    return reply[0] ?? '';
  }

  private apply(pairs: string[]): void {
    if (this.closed) return;
    const nodes: NodeInfo[] = [];
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const info = parseInfo(pairs[i + 1] as string);
      if (info && info.nodeId === pairs[i]) nodes.push(info);
    }
    nodes.sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
    const before = new Map(this.current.nodes.map((n) => [n.nodeId, n]));
    const after = new Map(nodes.map((n) => [n.nodeId, n]));
    // A node restarted under the same id counts as a leave plus a join: its actors are gone.
    const joined = nodes.filter((n) => before.get(n.nodeId)?.instance !== n.instance).map((n) => n.nodeId);
    const left = this.current.nodes.filter((n) => after.get(n.nodeId)?.instance !== n.instance).map((n) => n.nodeId);
    if (joined.length === 0 && left.length === 0) return;
    this.current = { version: this.current.version + 1, nodes };
    const change: ViewChange = { view: this.current, joined, left };
    this.log.info({ node_id: this.self.nodeId, version: this.current.version, nodes: nodes.map((n) => n.nodeId), joined, left }, 'membership: view changed');
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'membership: view listener failed');
      }
    }
  }

  private failed(err: Error): void {
    if (this.ok && !this.closed) this.log.warn({ node_id: this.self.nodeId, err: err.message }, 'membership: Redis unreachable; keeping the last view');
    this.ok = false;
  }

  private warnIfTaken(previous: string): void {
    const info = parseInfo(previous);
    if (info && info.instance !== this.self.instance && info.internalUrl !== this.self.internalUrl) {
      this.log.warn({ node_id: this.self.nodeId, other_url: info.internalUrl }, 'membership: this node id was live at another address; two nodes may share an id');
    }
  }
}

function parseInfo(text: string): NodeInfo | null {
  try {
    const v = JSON.parse(text) as Partial<NodeInfo>;
    if (typeof v.nodeId === 'string' && typeof v.internalUrl === 'string' && typeof v.instance === 'string' && typeof v.startedAt === 'number') {
      return { nodeId: v.nodeId, internalUrl: v.internalUrl, startedAt: v.startedAt, instance: v.instance };
    }
  } catch {
    // a foreign or corrupt entry: ignored, it expires like any other
  }
  return null;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
