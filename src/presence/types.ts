/**
 * The presence port: who is online, per account (tenant + user), never per conversation.
 *
 * Contract every driver keeps (contract.ts checks it):
 *  - `heartbeat(tenant, user, now)` records that the user's app is open at `now` (epoch ms).
 *    Heartbeats never move `last_seen_at` back: an older `now` than the one held is ignored.
 *  - `statuses(tenant, users, now)` answers one entry per distinct id asked, in the order asked:
 *    `online` when the last heartbeat is at most `windowMs` before `now`, else `offline`.
 *    `last_seen_at` is the last heartbeat (ISO-8601 UTC), or null when none is held: never seen,
 *    or forgotten (drivers may forget a user whose heartbeat is older than the window, and must
 *    bound their memory).
 *  - Tenants are isolated: a heartbeat in one tenant says nothing in another.
 *  - Membership is the caller's business (the API drops non-members through the IdP first).
 *  - Errors: a driver that cannot answer rejects (the API renders it as server_error); presence
 *    is best effort and never blocks a message send.
 */
import type { RedisClient } from '../redis/client.ts';

export type PresenceStatus = 'online' | 'offline';

export interface PresenceEntry {
  user_id: string;
  status: PresenceStatus;
  /** Last heartbeat, ISO-8601 UTC; null when none is known. */
  last_seen_at: string | null;
}

export interface Presence {
  readonly driver: PresenceConfig['driver'];
  /** The online window in ms. */
  readonly windowMs: number;
  heartbeat(tenant_id: string, user_id: string, now: number): Promise<void>;
  statuses(tenant_id: string, user_ids: readonly string[], now: number): Promise<PresenceEntry[]>;
  /** Stops timers. Idempotent. */
  close(): Promise<void>;
}

export type PresenceConfig = MemoryPresenceConfig | RedisPresenceConfig;

export interface MemoryPresenceConfig {
  driver: 'memory';
  windowMs: number;
  /** Users held across all tenants; past it the stalest are forgotten first. Default 1,000,000. */
  maxEntries?: number;
}

export interface RedisPresenceConfig {
  driver: 'redis';
  /** A connection of the driver's own: close() quits it. */
  redis: RedisClient;
  /** Prepended to every key (`<keyPrefix>presence:<tenant>`), so clusters can share one Redis. */
  keyPrefix: string;
  windowMs: number;
  /** Users held per tenant; past it the stalest are forgotten first. Default 1,000,000. */
  maxEntriesPerTenant?: number;
}
