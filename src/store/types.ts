/**
 * The store port: everything the conversation actors and the API layer persist.
 *
 * Drivers: `sqlite/sqlite-store.ts` (embedded, one file, the single-node default and the fast
 * tests) and `cassandra/cassandra-store.ts` (the cluster). `contract.ts` is the one suite both
 * must pass.
 *
 * Guarantees every driver keeps (the contract suite checks each):
 *  - Scope. Every conversation-scoped read and write names its context (tenant_id,
 *    application_id); a conversation of another context is absent (null), never returned.
 *  - Absence is an answer: a missing or soft-deleted conversation, a missing message or member,
 *    is `null`. Conflicts and fencing are typed errors (errors.ts); caller bugs are RangeError.
 *  - Atomicity. Each write method is all-or-nothing. A write that fails leaves no trace, and
 *    fails only its own caller, even when the driver commits it together with others.
 *  - Durability. A write's promise resolves only once the write is committed durably (for
 *    SQLite: fsynced, `synchronous=FULL`); an acknowledged write survives a crash.
 *  - Order. Writes issued by one caller, one after the other without awaiting, are applied in
 *    call order. A read issued after a write resolved sees that write.
 *  - Idempotency. Ids of conversations, messages and members are UUIDs chosen by the caller, so a
 *    retried create answers the record that exists (`created: false`) instead of a duplicate.
 *  - Fencing. Every write to an existing conversation carries the writer's `epoch`. A lower epoch
 *    than the stored one is refused with StaleEpochError and writes nothing; an equal or higher
 *    one is accepted and the stored epoch becomes the highest seen. `claim` hands out the next
 *    epoch, so an actor that activates after another can always fence it out; an external lease
 *    (the cluster's ring) may hand out epochs instead, as long as they only grow.
 *  - Business rules (permissions, ARCHIVED refusing sends, DIRECT membership being immutable,
 *    reply targets existing) belong to the actor; the store enforces only integrity: unique
 *    seq, one DIRECT per pair, maintained counters, monotonic read markers.
 *  - Paging is keyset, never OFFSET; positions are validated (InvalidPositionError) and pages
 *    are stable under ties; `next` is null exactly on the last page.
 *  - All methods return promises. The SQLite driver answers reads synchronously underneath (the
 *    promise only defers delivery to a microtask); the Cassandra driver will really wait.
 */
import type { BatcherOptions } from './sqlite/batcher.ts';
import type { ConversationStore, MemberStore } from './types-conversations.ts';
import type { MessageStore, ReactionStore, ReadStateStore } from './types-messages.ts';
import type { IdempotencyStore, ProfileStore, PushDeviceStore, RoleOverrideStore, SettingsStore } from './types-tenant.ts';

export type * from './records.ts';
export type * from './types-conversations.ts';
export type * from './types-messages.ts';
export type * from './types-tenant.ts';
export type { ConversationPosition, MemberPosition, MessagePosition } from './positions.ts';
export * from './errors.ts';
export { IDEMPOTENCY_PENDING_TTL_MS, IDEMPOTENCY_TTL_MS } from './types-tenant.ts';

/** How a store is opened; `index.ts` switches over `driver`. */
export type StoreConfig = SqliteStoreConfig | CassandraStoreConfig;

export interface SqliteStoreConfig {
  driver: 'sqlite';
  /** The database file, `${dataDir}/chat.sqlite` for a node (see sqliteStorePath). */
  path: string;
  /**
   * `exclusive` (default): this process holds the file's lock for its whole life, so a second
   * node pointed at the same data directory fails to open instead of sharing it by accident.
   * `shared-file`: several processes open one file (cluster tests); WAL plus busy_timeout
   * serialize their writers, and the driver keeps no cache that another process could stale.
   */
  mode?: 'exclusive' | 'shared-file';
  /** How long a writer waits for another process's lock before failing; default 5000 ms. */
  busyTimeoutMs?: number;
  /** How often the checkpointer thread folds the WAL into the file; default 250 ms. */
  checkpointIntervalMs?: number;
  /** Group commit tuning, see sqlite/batcher.ts. */
  groupCommit?: BatcherOptions;
  /**
   * `thread` (default): writes run on a thread of their own, so the event loop never waits on a
   * COMMIT or its fsync (sqlite/writer-thread.ts). `inline`: on the caller's thread.
   */
  writer?: 'thread' | 'inline';
}

/** The cluster store (Cassandra or ScyllaDB); see cassandra/cassandra-store.ts and docs/storage.md. */
export interface CassandraStoreConfig {
  driver: 'cassandra';
  /** `host` or `host:port` of a few nodes; the driver discovers the rest. */
  contactPoints: string[];
  /** The data center this node runs in: requests and quorums stay in it (LOCAL_QUORUM, LOCAL_SERIAL). */
  localDataCenter: string;
  /** Created when missing, with `replication`. */
  keyspace: string;
  /**
   * Replication of a keyspace created by this node (ignored when it exists). Default:
   * NetworkTopologyStrategy with `replicationFactor` (default 3) replicas in localDataCenter.
   * SimpleStrategy is for one-node development clusters only.
   */
  replication?:
    | { class: 'NetworkTopologyStrategy'; [dataCenter: string]: string | number }
    | { class: 'SimpleStrategy'; replication_factor: number };
  /** Shorthand for NetworkTopologyStrategy in the local data center (config's CHAT_CASSANDRA_REPLICATION_FACTOR). */
  replicationFactor?: number;
  /** Password authentication when set (null: none, as config answers). */
  username?: string | null;
  password?: string | null;
}

export interface ChatStore {
  readonly driver: StoreConfig['driver'];
  readonly conversations: ConversationStore;
  readonly members: MemberStore;
  readonly messages: MessageStore;
  readonly reactions: ReactionStore;
  readonly readState: ReadStateStore;
  readonly profiles: ProfileStore;
  readonly idempotency: IdempotencyStore;
  readonly settings: SettingsStore;
  readonly roleOverrides: RoleOverrideStore;
  readonly pushDevices: PushDeviceStore;
  /**
   * Commits what is queued, then releases the database. Every call after close() rejects with
   * StoreClosedError. Idempotent.
   */
  close(): Promise<void>;
}
