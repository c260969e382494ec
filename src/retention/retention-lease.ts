/**
 * The retention lease of a cluster: one node purges per interval. A single SET with NX and PX
 * (atomic on its own, no script needed): whoever sets the key first runs this tick; the key
 * expires a little before the next tick, so the lease moves on if its holder dies.
 */
import type { RedisClient } from '../redis/client.ts';

export function redisRetentionLease(redis: RedisClient, key: string, nodeId: string, intervalMs: number): () => Promise<boolean> {
  // 90% of the interval: expired before the holder's own next tick, so a living holder can
  // take it again, and any other node can take it when the holder is gone.
  const ttl = Math.max(500, Math.floor(intervalMs * 0.9));
  return async () => (await redis.set(key, nodeId, 'PX', ttl, 'NX')) === 'OK';
}
