/**
 * Redis connections for the cluster drivers (membership, bus, presence, rate limits): one Redis
 * server (`CHAT_REDIS_URL`), or a Redis Cluster (`CHAT_REDIS_CLUSTER_NODES`, ioredis `Cluster`).
 *
 * Every driver takes a connection factory rather than a URL, so a node opens the connections it
 * needs with one set of options and the tests point everything at their own servers. The drivers
 * run the same code on both: every script's keys share a hash tag, so a Cluster routes each call
 * to one master. What a Cluster needs beyond that (which node serves a key, a connection of one's
 * own to it) is in `nodeOf` and `dedicatedTo` below.
 *
 * Blocking commands (XREADGROUP BLOCK, XREAD BLOCK) need a connection of their own: a blocked
 * connection delays every command queued behind it (on a Cluster, every command for that node).
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { keySlot } from './slots.ts';

export interface RedisSettings {
  /** `redis://[user:password@]host:port[/db]`: one Redis server (ignored with clusterNodes). */
  url: string;
  /**
   * Seed nodes of a Redis Cluster, `host:port` or `redis[s]://[user:password@]host:port` (the
   * credentials and TLS of the first entry that has them apply to every node). Empty: `url`.
   */
  clusterNodes?: readonly string[];
  /** Prefix for every key this cluster writes, so several clusters can share one Redis. */
  keyPrefix: string;
}

/** A connection: to one server, or to a Redis Cluster (routing each command by its key's slot). */
export type RedisClient = Redis | Cluster;

/** Opens one connection; `name` shows in CLIENT LIST and in logs. */
export type RedisFactory = (name: string) => RedisClient;

/** Reconnection backoff: 100 ms doubling to 1 s. */
const backoff = (times: number): number => Math.min(1000, 50 * 2 ** Math.min(times, 5));

export function redisFactory(settings: RedisSettings, extra: RedisOptions = {}): RedisFactory {
  const seeds = settings.clusterNodes ?? [];
  if (seeds.length > 0) return clusterFactory(seeds, extra);
  return (name) =>
    new Redis(settings.url, {
      connectionName: name,
      // Commands issued while disconnected wait for the reconnect, but not forever: a driver
      // call fails after the retries rather than hanging a request.
      maxRetriesPerRequest: 2,
      enableAutoPipelining: true,
      retryStrategy: backoff,
      ...extra,
    });
}

interface Seed {
  host: string;
  port: number;
  username?: string;
  password?: string;
  tls: boolean;
}

/** `host:port` or `redis[s]://[user:password@]host:port`; throws on anything else. */
export function parseClusterNode(entry: string): Seed {
  const text = entry.trim();
  const url = new URL(/^rediss?:\/\//.test(text) ? text : `redis://${text}`);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new RangeError(`not a Redis node: ${entry}`);
  const port = Number(url.port);
  if (!url.hostname || !Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`a Redis Cluster node needs host:port (got ${JSON.stringify(entry)})`);
  const seed: Seed = { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port, tls: url.protocol === 'rediss:' };
  if (url.username) seed.username = decodeURIComponent(url.username);
  if (url.password) seed.password = decodeURIComponent(url.password);
  return seed;
}

function clusterFactory(entries: readonly string[], extra: RedisOptions): RedisFactory {
  const seeds = entries.map(parseClusterNode);
  const auth = seeds.find((s) => s.password !== undefined || s.username !== undefined);
  const tls = seeds.some((s) => s.tls);
  // A Cluster's own reconnection is clusterRetryStrategy; per-node reconnection stays off (ioredis
  // refreshes the slot map instead, which is how a promoted replica is found).
  const { retryStrategy: _ignored, ...rest } = extra;
  return (name) => {
    const redisOptions: RedisOptions = Object.assign(
      { connectionName: name, maxRetriesPerRequest: 2 },
      auth?.username !== undefined ? { username: auth.username } : {},
      auth?.password !== undefined ? { password: auth.password } : {},
      tls ? { tls: {} } : {},
      rest,
    );
    const options: ClusterOptions = {
      redisOptions,
      // Off on a Cluster: ioredis retries a failed auto-pipeline batch only when every error in it
      // is the same, so after a failover the MOVED answers for the several slots of one batch went
      // back to the callers as errors. Sent one by one, each command follows its own redirection.
      // (Redis CPU per publish measured 27-30 µs with it, 30-38 without: within the noise here.)
      enableAutoPipelining: false,
      clusterRetryStrategy: backoff,
      // A command meeting a dead master is retried every retryDelayOnFailover ms (refreshing the
      // slot map each time) up to maxRedirections times: ~3 s, about what a replica takes to be
      // promoted with cluster-node-timeout 1-2 s. Past that it fails, as on a single Redis.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      maxRedirections: 16,
      slotsRefreshTimeout: 1000,
    };
    const cluster = new Cluster(
      seeds.map((s) => ({ host: s.host, port: s.port })),
      options,
    );
    boundOfflineQueue(cluster, OFFLINE_LIMIT_MS);
    return cluster;
  };
}

/** How long commands may wait for a Cluster that lost every node (a single Redis: ~2 retries). */
const OFFLINE_LIMIT_MS = 2000;

/**
 * A Cluster that lost every node queues commands until it reconnects, however long that takes:
 * a driver call would hang. Once it has been unreachable for `limitMs`, the queued commands are
 * rejected (never run later: a late publish would arrive out of its time) and new ones fail at
 * once, until it is ready again. (One dead master does not get here: its slots' commands follow
 * the failover retries above and fail after them.)
 */
function boundOfflineQueue(cluster: Cluster, limitMs: number): void {
  let timer: NodeJS.Timeout | null = null;
  const give = (): void => {
    timer = null;
    cluster.options.enableOfflineQueue = false;
    // flushQueue is how ioredis itself fails queued commands when a Cluster ends.
    (cluster as unknown as { flushQueue(error: Error): void }).flushQueue(new Error(`Redis Cluster unreachable for ${limitMs} ms`));
  };
  cluster.on('reconnecting', () => {
    timer ??= setTimeout(give, limitMs);
    timer.unref();
  });
  cluster.on('ready', () => {
    if (timer) clearTimeout(timer);
    timer = null;
    cluster.options.enableOfflineQueue = true;
  });
  cluster.on('end', () => {
    if (timer) clearTimeout(timer);
    timer = null;
  });
}

export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/**
 * The connection that serves `key`: the client itself on one server; on a Cluster, the client's
 * own connection to the master of the key's slot (commands sent to it directly share the socket
 * the Cluster routes that key's commands to), or null while the slot map is not known yet.
 */
export function nodeOf(client: RedisClient, key: string): Redis | null {
  if (!isCluster(client)) return client;
  const owner = client.slots[keySlot(key)]?.[0];
  if (owner === undefined) return null;
  return client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner) ?? null;
}

/** The node a key lives on (`host:port`), or `redis` on one server; null while unknown. */
export function nodeKeyOf(client: RedisClient, key: string): string | null {
  if (!isCluster(client)) return 'redis';
  return client.slots[keySlot(key)]?.[0] ?? null;
}

/**
 * A new connection of its own to the node serving `key` (a subscriber, a blocking reader), with
 * the client's options and no reconnection of its own: when it closes, the caller asks again,
 * and finds the key's new master after a failover. Null while the slot map is not known.
 */
export function dedicatedTo(client: RedisClient, key: string, name: string): Redis | null {
  const node = nodeOf(client, key);
  if (!node) return null;
  return node.duplicate({ connectionName: name, lazyConnect: false, retryStrategy: () => null, enableAutoPipelining: false });
}

/**
 * Reloads a Cluster's slot map (after a connection to a node was lost); nothing on one server. A
 * Cluster still connecting has no node to ask yet (a refresh would fail at once): this waits for
 * its first slot map instead, up to `firstMapMs`.
 */
export function refreshTopology(client: RedisClient, firstMapMs = 5_000): Promise<void> {
  if (!isCluster(client)) return Promise.resolve();
  if (client.status === 'connecting' || client.status === 'connect') {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        client.off('ready', done);
        client.off('end', done);
        resolve();
      };
      const timer = setTimeout(done, firstMapMs);
      client.once('ready', done);
      client.once('end', done);
    });
  }
  return new Promise((resolve) => client.refreshSlotsCache(() => resolve()));
}
