/**
 * The sharding layer of the cluster: membership in Redis, rendezvous placement, the node-to-node
 * channel and the router route handlers call. Design and configuration: docs/sharding.md.
 *
 * startSharding wires one node's pieces:
 *   InternalServer (listens first: its port goes into the node's registration)
 *   Membership (registers, heartbeats, watches) ──► Placement (ring per view, handoff)
 *   ForwardClient (keep-alive agents per peer) + Placement + local ActorHost ──► RoutedActors
 */
import type { RedisFactory } from '../redis/client.ts';
import { ForwardClient } from './forward-client.ts';
import { InternalServer } from './internal-server.ts';
import { Membership } from './membership.ts';
import { Placement, type Owner } from './placement.ts';
import { RoutedActors, newRoutingStats, type RoutingStats } from './routed-actors.ts';
import { silentLog, type LocalActorHost, type ShardingLog } from './types.ts';

export { Membership, type MembershipOptions } from './membership.ts';
export { Ring, hash32 } from './ring.ts';
export { Placement, type Owner } from './placement.ts';
export { InternalServer, type InternalServerOptions } from './internal-server.ts';
export { ForwardClient, type ForwardClientOptions } from './forward-client.ts';
export { RoutedActors, type RoutedActorsOptions, type RoutingStats } from './routed-actors.ts';
export { ForwardUnavailableError, RemoteServerError, type ForwardReason } from './wire.ts';
export type * from './types.ts';

export interface ShardingOptions {
  actorHost: LocalActorHost;
  redisFactory: RedisFactory;
  keyPrefix: string;
  nodeId: string;
  internal: {
    /** Interface the internal listener binds (CHAT_INTERNAL_HOST). */
    host: string;
    /** 0 picks a free port. */
    port: number;
    /** How peers reach this node; default `http://<host>:<bound port>`. */
    url?: string;
  };
  /** Shared by every node of the cluster, at least 16 characters. */
  secret: string;
  timings?: {
    /** Default 1000 ms. */
    heartbeatMs?: number;
    /** Default 3 × heartbeatMs; a dead node leaves every view within ttlMs + heartbeatMs. */
    ttlMs?: number;
    /**
     * Overall time of one routed call, retries included; default max(5000, ttlMs + heartbeatMs +
     * 1000), so that a call caught by a crash outlives the dead node's stay in the views.
     */
    deadlineMs?: number;
    /** One forwarded attempt; default 3000 ms. */
    forwardTimeoutMs?: number;
  };
  limits?: {
    maxInFlightPerPeer?: number;
    maxQueuedPerPeer?: number;
    maxBodyBytes?: number;
  };
  log?: ShardingLog;
}

export interface Sharding {
  /** What route handlers call instead of the ActorHost. */
  actors: RoutedActors;
  membership: Membership;
  placement: Placement;
  internalPort: number;
  internalUrl: string;
  /** False while Redis is unreachable (the node keeps routing by its last view). */
  healthy(): boolean;
  /** Live counters of the router (read them for metrics; do not write). */
  stats: Readonly<RoutingStats>;
  /** Graceful step one: out of the ring at once, while still forwarding what the edge sends. */
  leave(): Promise<void>;
  /**
   * Leaves (unless `leave: false`, which looks like a crash to the others), waits for forwarded
   * requests in flight (up to `graceMs`), closes connections. Does not close the ActorHost.
   */
  close(options?: { leave?: boolean; graceMs?: number }): Promise<void>;
}

export async function startSharding(options: ShardingOptions): Promise<Sharding> {
  const log = options.log ?? silentLog;
  const heartbeatMs = options.timings?.heartbeatMs ?? 1000;
  const ttlMs = options.timings?.ttlMs ?? 3 * heartbeatMs;
  const forwardTimeoutMs = options.timings?.forwardTimeoutMs ?? 3000;
  const deadlineMs = options.timings?.deadlineMs ?? Math.max(5000, ttlMs + heartbeatMs + 1000);

  // The server listens before the node registers, so peers never see an address that refuses;
  // until placement exists it refuses every call as not_owner, which senders retry.
  let placement: Placement | null = null;
  const server = await InternalServer.listen({
    host: options.internal.host,
    port: options.internal.port,
    secret: options.secret,
    actors: options.actorHost,
    maxBodyBytes: options.limits?.maxBodyBytes,
    log,
    placement: {
      get selfId() {
        return options.nodeId;
      },
      owner: (id: string): Owner => placement?.owner(id) ?? { kind: 'none' },
      touched: (id: string) => placement?.touched(id),
      suspectStale: () => placement?.suspectStale() ?? Promise.resolve(),
    },
  });
  const internalUrl = (options.internal.url ?? `http://${options.internal.host}:${server.port}`).replace(/\/+$/, '');
  const membership = new Membership({ redis: options.redisFactory, keyPrefix: options.keyPrefix, nodeId: options.nodeId, internalUrl, heartbeatMs, ttlMs, log });
  try {
    await membership.start();
  } catch (err) {
    await membership.close();
    await server.close(0);
    throw new Error(`sharding: cannot register node ${options.nodeId} in Redis: ${(err as Error).message}`);
  }
  placement = new Placement(membership, options.actorHost, log);
  const client = new ForwardClient({
    secret: options.secret,
    selfId: options.nodeId,
    timeoutMs: forwardTimeoutMs,
    maxInFlightPerPeer: options.limits?.maxInFlightPerPeer,
    maxQueuedPerPeer: options.limits?.maxQueuedPerPeer,
  });
  placement.onPeers((urls) => client.retain(urls));
  const stats = newRoutingStats();
  const actors = new RoutedActors({
    local: options.actorHost,
    stats,
    placement,
    client,
    deadlineMs,
    attemptTimeoutMs: forwardTimeoutMs,
    log,
  });
  const live = placement;
  log.info({ node_id: options.nodeId, internal_url: internalUrl, heartbeat_ms: heartbeatMs, ttl_ms: ttlMs, deadline_ms: deadlineMs, nodes: membership.view.nodes.map((n) => n.nodeId) }, 'sharding: node registered');

  let closing: Promise<void> | null = null;
  return {
    actors,
    membership,
    placement: live,
    internalPort: server.port,
    internalUrl,
    healthy: () => membership.healthy,
    stats,
    leave: () => membership.leave(),
    close(closeOptions = {}) {
      closing ??= (async () => {
        if (closeOptions.leave !== false) await membership.leave().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'sharding: leave failed; the others will drop this node after the TTL'));
        await server.close(closeOptions.graceMs ?? 5000);
        client.close();
        live.close();
        await membership.close();
      })();
      return closing;
    },
  };
}
