/**
 * When is a node ready: CQL answers on it, and in a ring every node sees every other node up.
 *
 * "Sees up" is asked of Cassandra itself, through one coordinator at a time:
 *  - the coordinator's `system.peers` lists the other node with its token (gossip told it where
 *    the node sits in the ring);
 *  - a read at consistency ONE of a token range only that node holds (keyspace
 *    `cassandra_runner`, SimpleStrategy RF 1, one token per node, see config.ts ringTokens)
 *    succeeds: a coordinator whose failure detector has the node down answers Unavailable.
 */
import cassandra from 'cassandra-driver';
import { LOCAL_DATA_CENTER } from './config.ts';

export const PROBE_KEYSPACE = 'cassandra_runner';

export interface Addressed {
  address: string;
  nativePort: number;
  token: string;
}

/** A client that talks to that one node only (no other coordinator, no discovery of pools). */
export function pinnedClient(node: { address: string; nativePort: number }, keyspace?: string): cassandra.Client {
  const { DCAwareRoundRobinPolicy, WhiteListPolicy } = cassandra.policies.loadBalancing;
  const endpoint = `${node.address}:${node.nativePort}`;
  return new cassandra.Client({
    contactPoints: [endpoint],
    localDataCenter: LOCAL_DATA_CENTER,
    ...(keyspace === undefined ? {} : { keyspace }),
    policies: { loadBalancing: new WhiteListPolicy(new DCAwareRoundRobinPolicy(LOCAL_DATA_CENTER), [endpoint]), reconnection: new cassandra.policies.reconnection.ConstantReconnectionPolicy(500) },
    socketOptions: { connectTimeout: 2000, readTimeout: 10_000 },
  });
}

/** `SELECT release_version FROM system.local` on that node: its version, or null when it does not answer. */
export async function releaseVersion(node: { address: string; nativePort: number }): Promise<string | null> {
  const client = pinnedClient(node);
  try {
    await client.connect();
    const rs = await client.execute('SELECT release_version FROM system.local');
    return String(rs.first()?.get('release_version') ?? '') || null;
  } catch {
    return null;
  } finally {
    await client.shutdown().catch(() => {});
  }
}

export async function ensureProbeKeyspace(node: Addressed): Promise<void> {
  const client = pinnedClient(node);
  try {
    await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${PROBE_KEYSPACE} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
    await client.execute(`CREATE TABLE IF NOT EXISTS ${PROBE_KEYSPACE}.probe (k int PRIMARY KEY)`);
  } finally {
    await client.shutdown().catch(() => {});
  }
}

/** Why `coordinator` does not see `target` up yet, or null when it does. */
export async function notSeen(coordinator: Addressed, target: Addressed): Promise<string | null> {
  const client = pinnedClient(coordinator);
  try {
    const peers = await client.execute('SELECT peer, tokens FROM system.peers');
    const row = peers.rows.find((r) => String(r.get('peer')) === target.address);
    if (!row) return `${coordinator.address} has no peer ${target.address} yet`;
    const tokens = (row.get('tokens') as string[] | null) ?? [];
    if (!tokens.includes(target.token)) return `${coordinator.address} does not know ${target.address}'s token yet`;
    // The last 1000 tokens of the target's range: owned by the target alone (RF 1).
    const hi = BigInt(target.token);
    await client.execute(`SELECT k FROM ${PROBE_KEYSPACE}.probe WHERE token(k) > ${hi - 1000n} AND token(k) <= ${hi} LIMIT 1`, [], {
      consistency: cassandra.types.consistencies.one,
    });
    return null;
  } catch (err) {
    return `${coordinator.address} → ${target.address}: ${(err as Error).message}`;
  } finally {
    await client.shutdown().catch(() => {});
  }
}
