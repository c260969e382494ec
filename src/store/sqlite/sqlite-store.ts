/**
 * The embedded store: one SQLite file through better-sqlite3, the single-node default.
 *
 * Opening takes, in exclusive mode, the lock file (file-lock.ts: one process per file), then
 * sets WAL (readers never block the writer and a commit appends to one file), synchronous=FULL
 * (the WAL is fsynced at every commit: an acknowledged write survives power loss, not just a
 * process crash), foreign keys, busy_timeout (another process's write lock is waited for, not
 * failed on), wal_autocheckpoint=0 (checkpoints run in a worker thread, checkpointer.ts), then
 * applies pending migrations.
 *
 * All writes go through one WriteBatcher (group commit, see batcher.ts); reads run directly
 * (see shared.ts). The driver holds no cache: every read goes to the file, so processes sharing
 * it never see stale state.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ChatStore, SqliteStoreConfig } from '../types.ts';
import { WriteBatcher, type BatcherStats } from './batcher.ts';
import { startCheckpointer, type Checkpointer } from './checkpointer.ts';
import { GateCache, type GateCacheStats } from './gate-cache.ts';
import type { TriggerMemo, TriggerMemoStats } from './trigger-memo.ts';
import { FileLock } from './file-lock.ts';
import { SqliteConversationStore } from './conversation-store.ts';
import { ConversationsTable } from './conversations.ts';
import { DirectPairsTable } from './direct-pairs.ts';
import { SqliteIdempotencyStore } from './idempotency.ts';
import { SqliteMessageStore } from './message-store.ts';
import { MessagesTable } from './messages.ts';
import { MembersTable, SqliteMemberStore } from './members.ts';
import { loadMigrations, migrate, type Migration } from './migrations.ts';
import { memoizeProfiles, SqliteProfileStore } from './profiles.ts';
import { memoizeDevices, SqlitePushDeviceStore } from './push-devices.ts';
import type { ProfileRecord, PushDevice } from '../records.ts';
import { ReactionsTable, SqliteReactionStore } from './reactions.ts';
import { ReadStateTable, SqliteReadStateStore } from './read-state.ts';
import { SqliteRoleOverrideStore } from './role-overrides.ts';
import { SqliteSettingsStore } from './settings.ts';
import { SqliteHandle } from './shared.ts';

/** Where a node keeps its database: `${dataDir}/chat.sqlite`. */
export function sqliteStorePath(dataDir: string): string {
  return path.join(dataDir, 'chat.sqlite');
}

export interface SqliteOpenOptions {
  /** Migrations to apply instead of schema/sqlite/ (tests of the runner). */
  migrations?: readonly Migration[];
  /**
   * `standalone` (default): this connection reads and writes, on the caller's thread.
   * The writer thread (writer-thread.ts) splits one store in two connections:
   * `writer`, in the worker: applies migrations, runs every write and the checkpointer, takes no
   * lock file (the opening thread holds it), reports memo invalidations through `onTouch`;
   * `reader`, on the opening thread: reads only (a write is refused as a bug), no migrations, no
   * checkpointer, memos invalidated by the writer's reports.
   */
  role?: 'standalone' | 'writer' | 'reader';
  /** Writer role: every memo group its triggers touch (trigger-memo.ts). */
  onTouch?: (memo: string, group: string) => void;
}

export class SqliteChatStore implements ChatStore {
  readonly driver = 'sqlite' as const;
  readonly conversations: SqliteConversationStore;
  readonly members: SqliteMemberStore;
  readonly messages: SqliteMessageStore;
  readonly reactions: SqliteReactionStore;
  readonly readState: SqliteReadStateStore;
  readonly profiles: SqliteProfileStore;
  readonly idempotency: SqliteIdempotencyStore;
  readonly settings: SqliteSettingsStore;
  readonly roleOverrides: SqliteRoleOverrideStore;
  readonly pushDevices: SqlitePushDeviceStore;
  /** Migrations applied by this open (empty when the file was up to date). */
  readonly appliedMigrations: string[];
  private readonly db: Database.Database;
  private readonly batcher: WriteBatcher;
  private readonly handle: SqliteHandle;
  private readonly mode: 'exclusive' | 'shared-file';
  private closed = false;
  private readonly lock: FileLock | null;
  private readonly role: 'standalone' | 'writer' | 'reader';
  private readonly checkpointer: Checkpointer | null;
  private readonly gates: GateCache | null;
  private readonly devices: TriggerMemo<readonly PushDevice[]> | null;
  private readonly profileMemo: TriggerMemo<ProfileRecord | null> | null;
  /** Every memo by name, for the writer thread's reports (touch). */
  private readonly memos = new Map<string, { touch(group: string): void }>();

  constructor(config: SqliteStoreConfig, options: SqliteOpenOptions = {}) {
    const mode = config.mode ?? 'exclusive';
    const role = options.role ?? 'standalone';
    const busyTimeoutMs = config.busyTimeoutMs ?? 5000;
    if (mode !== 'exclusive' && mode !== 'shared-file') throw new RangeError(`unknown sqlite mode ${String(mode)}`);
    if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new RangeError('busyTimeoutMs must be a non-negative integer');
    fs.mkdirSync(path.dirname(path.resolve(config.path)), { recursive: true });
    // Exclusive mode: the lock file first, so a second process fails here, at start.
    const lock = mode === 'exclusive' && role === 'standalone' ? FileLock.take(config.path) : null;
    const db = new Database(config.path, { timeout: busyTimeoutMs });
    try {
      const journal = db.pragma('journal_mode = WAL', { simple: true });
      if (journal !== 'wal') throw new Error(`${config.path}: could not switch to WAL (journal_mode is ${String(journal)})`);
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      // 64 MiB of page cache (default 2 MiB): the hot index pages of busy conversations stay in
      // memory instead of being re-read through the OS on every append (measured ~25% per append).
      db.pragma('cache_size = -65536');
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      // Checkpoints run in the checkpointer's thread, never inside a commit on the event loop.
      db.pragma('wal_autocheckpoint = 0');
      // After a checkpoint resets the WAL, truncate the file back to 64 MiB at most.
      db.pragma('journal_size_limit = 67108864');
      this.appliedMigrations = role === 'reader' ? [] : migrate(db, options.migrations ?? loadMigrations());
      this.batcher = new WriteBatcher(db, config.groupCommit);
      if (role === 'reader') db.pragma('query_only = ON'); // a write here would be a bug: refuse it
    } catch (error) {
      db.close();
      lock?.release(); // a failed open must not block the next attempt
      throw error;
    }
    this.db = db;
    this.mode = mode;
    this.lock = lock;
    this.role = role;
    this.checkpointer = role === 'reader' ? null : startCheckpointer(path.resolve(config.path), config.checkpointIntervalMs ?? 250);
    const h = (this.handle = new SqliteHandle(db, this.batcher, role !== 'reader'));
    const conversations = new ConversationsTable(db);
    const members = new MembersTable(db);
    const messages = new MessagesTable(db);
    const reactions = new ReactionsTable(db);
    const readState = new ReadStateTable(db);
    // Exclusive mode: one connection is the file's only writer, so its triggers see every write
    // (the reader's memos have no triggers: the writer reports what its triggers saw).
    const memoDb = role === 'reader' ? null : db;
    this.gates = mode === 'exclusive' ? new GateCache(memoDb, undefined, undefined, options.onTouch) : null;
    this.conversations = new SqliteConversationStore(h, conversations, members, new DirectPairsTable(db), readState, this.gates);
    this.members = new SqliteMemberStore(h, conversations, members, readState);
    this.messages = new SqliteMessageStore(h, conversations, messages, reactions);
    this.reactions = new SqliteReactionStore(h, conversations, messages, reactions);
    this.readState = new SqliteReadStateStore(h, conversations, readState);
    this.profileMemo = mode === 'exclusive' ? memoizeProfiles(memoDb, options.onTouch) : null;
    this.profiles = new SqliteProfileStore(h, this.profileMemo);
    this.idempotency = new SqliteIdempotencyStore(h);
    this.settings = new SqliteSettingsStore(h);
    this.roleOverrides = new SqliteRoleOverrideStore(h);
    this.devices = mode === 'exclusive' ? memoizeDevices(memoDb, options.onTouch) : null;
    this.pushDevices = new SqlitePushDeviceStore(h, this.devices);
    for (const memo of [this.gates, this.devices, this.profileMemo]) if (memo !== null) this.memos.set(memo.name, memo);
  }

  /** Group-commit counters: `transactions` below `ops` is batching at work. */
  stats(): Readonly<BatcherStats> {
    const { commitBuckets, ...counts } = this.batcher.stats;
    return { commitBuckets: [...commitBuckets], ...counts };
  }

  /** Writes queued for the next group commit. */
  writesInFlight(): number {
    return this.batcher.queued;
  }

  /** Push device memo counters (push-devices.ts); null in shared-file mode, which has none. */
  deviceCacheStats(): Readonly<TriggerMemoStats> | null {
    return this.devices === null ? null : { ...this.devices.stats };
  }

  /** Profile memo counters (profiles.ts); null in shared-file mode, which has none. */
  profileCacheStats(): Readonly<TriggerMemoStats> | null {
    return this.profileMemo === null ? null : { ...this.profileMemo.stats };
  }

  /** Gate memo counters (gate-cache.ts); null in shared-file mode, which has none. */
  gateCacheStats(): Readonly<GateCacheStats> | null {
    return this.gates === null ? null : { ...this.gates.stats };
  }

  /** Reader role: drops what the writer's triggers touched (writer-thread.ts). */
  touch(memo: string, group: string): void {
    this.memos.get(memo)?.touch(group);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Commit what is queued (its callers get their answers), then refuse everything.
    this.batcher.close();
    this.handle.markClosed();
    await this.checkpointer?.stop();
    // Refresh planner statistics where SQLite thinks they are stale (what its docs advise before
    // closing a long-lived connection), and fold the WAL back into the main file so a stopped
    // node's data is one self-contained file. Not in shared-file mode: both would wait on other
    // processes' locks. (test/store/sqlite-query-plans.test.ts holds the plans under ANALYZE.)
    if (this.mode === 'exclusive' && this.role !== 'reader') {
      this.db.pragma('optimize');
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    }
    this.db.close();
    this.lock?.release();
  }
}
