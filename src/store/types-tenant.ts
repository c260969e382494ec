/**
 * Tenant-level parts of the store port: known users, idempotency records, settings, role
 * overrides, push devices. None of these belongs to a conversation, so none is fenced.
 */
import type { IdempotencyRecord, ProfileRecord, PushDevice, PushPlatform, RoleOverride, TenantSettings } from './records.ts';

export interface ProfileInput {
  user_id: string;
  display_name: string | null;
  avatar_url: string | null;
}

export interface ProfileStore {
  /**
   * Records what is known about users of a tenant. `idp` answers are authoritative and
   * overwrite; `hint`s (a machine naming a user the service may never have seen) only fill what
   * is unknown: a new row, or null fields of an existing one. Unchanged rows are not rewritten.
   */
  upsert(tenant_id: string, profiles: readonly ProfileInput[], source: 'idp' | 'hint', at?: string): Promise<void>;

  /** Profiles of those of `user_ids` that are known, in no particular order. */
  get(tenant_id: string, user_ids: readonly string[]): Promise<ProfileRecord[]>;

  /**
   * Known users whose user_id or display_name starts with `prefix`, case-insensitively (full
   * Unicode lower-casing; `%` and `_` are plain characters). At most `limit` (1..1000), ordered
   * by user_id. When more than `limit` match, which ones are answered is up to the driver (the
   * lookup is a bounded suggestion list, not a paged listing: the user types more). An empty
   * prefix is a RangeError (the API refuses short queries before).
   */
  search(tenant_id: string, prefix: string, limit: number): Promise<ProfileRecord[]>;
}

export interface IdempotencyKey {
  /** Who sent it, e.g. `user:<tenant>:<user>` or `client:<client_id>`; keys never cross principals. */
  principal_key: string;
  idempotency_key: string;
  /** Method plus concrete path, e.g. `POST /tenants/t/applications/a/conversations`. */
  method_route: string;
}

/** Records are answered for 24 h after their creation, then treated as absent and swept. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim still unfinished after this long belongs to a request that died; it can be taken over. */
export const IDEMPOTENCY_PENDING_TTL_MS = 60 * 1000;

export interface IdempotencyStore {
  /**
   * Starts a request under a key. `claimed: true`: no live record existed, a pending one now
   * does, and the caller runs the request then calls complete() (or release() if it produced no
   * response to replay). `claimed: false`: the live record (finished, or pending in another
   * request) is answered and nothing changes; the caller compares request_hash and replays or
   * refuses. Records older than IDEMPOTENCY_TTL_MS, and pending ones older than
   * IDEMPOTENCY_PENDING_TTL_MS, count as absent. Atomic: of concurrent claims exactly one wins.
   */
  claim(key: IdempotencyKey, request_hash: string, at?: string): Promise<{ claimed: true } | { claimed: false; record: IdempotencyRecord }>;

  /** Stores the response of a claimed request. False when no pending claim exists any more. */
  complete(key: IdempotencyKey, response_status: number, response_body: string | null): Promise<boolean>;

  /** Drops a pending claim so a retry can run the request again. */
  release(key: IdempotencyKey): Promise<void>;

  /** Live record or null (same expiry rules as claim). */
  get(key: IdempotencyKey, at?: string): Promise<IdempotencyRecord | null>;

  /** Deletes records past IDEMPOTENCY_TTL_MS at `at`; answers how many. */
  sweep(at?: string): Promise<number>;
}

export interface SettingsStore {
  /** The tenant's settings; defaults (retention null, updated_at null) when never written. */
  get(tenant_id: string): Promise<TenantSettings>;
  /** Applies the fields present; RangeError for a retention that is not an integer >= 1 or null. */
  update(tenant_id: string, patch: { message_retention_days?: number | null }, at?: string): Promise<TenantSettings>;
  /** Every tenant with a retention set: the retention job's work list. */
  listRetention(): Promise<Array<{ tenant_id: string; message_retention_days: number }>>;
}

export interface RoleOverrideStore {
  /** Overrides of one mapping (application_id null: tenant-wide), ordered by role_id. */
  list(tenant_id: string, application_id: string | null): Promise<RoleOverride[]>;
  /** Replaces the role's capabilities in that mapping (deduplicated, sorted). */
  set(tenant_id: string, application_id: string | null, role_id: string, capabilities: readonly string[], at?: string): Promise<RoleOverride>;
  /** Drops the override (back to the IdP's catalog); true when one existed. */
  delete(tenant_id: string, application_id: string | null, role_id: string): Promise<boolean>;
}

export interface PushDeviceInput {
  tenant_id: string;
  user_id: string;
  platform: PushPlatform;
  token_or_endpoint: string;
  p256dh?: string | null;
  auth?: string | null;
}

export interface PushDeviceStore {
  /**
   * Registers a device, keyed by (tenant_id, token_or_endpoint). Registering it again updates
   * it, and moves it to `user_id` when another user registered it before (a shared browser):
   * a device pushes to one user only. created_at is kept from the first registration.
   */
  upsert(device: PushDeviceInput, at?: string): Promise<PushDevice>;
  /** Unregisters the user's device; true when it existed (another user's device is left alone). */
  delete(tenant_id: string, user_id: string, token_or_endpoint: string): Promise<boolean>;
  /** Every device of those users, ordered by user_id then created_at. */
  listForUsers(tenant_id: string, user_ids: readonly string[]): Promise<PushDevice[]>;
  /** Prunes an endpoint the push service reported gone (404/410), in every tenant; answers rows removed. */
  deleteEndpoint(token_or_endpoint: string): Promise<number>;
}
