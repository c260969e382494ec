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
   * overwrite; `hint`s (a machine naming a user the service has never seen) only fill what is
   * unknown: a new row, or null fields of an existing one. The API applies hints only to users
   * with no row before the request (the row it fills is the one the request's own eligibility
   * check wrote from the IdP). Unchanged rows are not rewritten.
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
/**
 * Upper bound on a claim of a live process: one still unfinished this long after its creation is
 * taken over even though its owner runs (a request stuck that long is answered by a retry).
 */
export const IDEMPOTENCY_PENDING_TTL_MS = 60 * 1000;

/** Who claims a key, and which claimants still run (docs/storage.md, "Idempotency records"). */
export interface ClaimOwner {
  /** The claiming process: a random id per process start (in a cluster, its membership instance). */
  owner: string;
  /**
   * The owners of the processes known to be alive, `owner` included. A pending claim of any
   * other owner (or of none: rows older than the owner column) died with its process. A list,
   * not a function: the SQLite writer thread receives the arguments by structured clone.
   */
  live: readonly string[];
}

export interface IdempotencyStore {
  /**
   * Starts a request under a key. `claimed: true`: the caller now owns a pending record, runs the
   * request, then calls complete() (or release() if it produced no response to replay);
   * `created_at` is the key's ORIGINAL claim time (kept when a claim is taken over), which the
   * API derives the ids of what the request creates from, so a re-run writes the same ids.
   * `claimed: false`: the record is answered and nothing changes (finished; pending in a live
   * process; or pending under another request_hash), and the caller compares request_hash and
   * replays or refuses.
   *
   * A pending record with the same request_hash is taken over at once, keeping created_at, when
   * its owner is not in `by.live` (its process died), or when it is older than
   * IDEMPOTENCY_PENDING_TTL_MS. Records older than IDEMPOTENCY_TTL_MS count as absent (a new
   * claim, created at `at`). Atomic: of concurrent claims exactly one wins; a take-over is a
   * compare-and-set on the owner.
   */
  claim(key: IdempotencyKey, request_hash: string, by: ClaimOwner, at?: string): Promise<{ claimed: true; created_at: string } | { claimed: false; record: IdempotencyRecord }>;

  /**
   * Stores the response of a claimed request. False when `owner` no longer holds a pending claim
   * (finished, released, or taken over by a retry since).
   */
  complete(key: IdempotencyKey, owner: string, response_status: number, response_body: string | null): Promise<boolean>;

  /**
   * Gives up `owner`'s pending claim so a retry can run the request again; nothing if it holds
   * none. The record stays, without an owner: the next claim of the same request takes it over at
   * once with the same created_at, so a re-run gives what it creates the same ids as this run (a
   * failure answered as 5xx may follow a write that committed). Another request body is still
   * answered the record (key reused).
   */
  release(key: IdempotencyKey, owner: string): Promise<void>;

  /** Live record or null (finished ones for IDEMPOTENCY_TTL_MS, pending ones until absent or taken over). */
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
