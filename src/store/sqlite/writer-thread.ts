/**
 * The SQLite driver with its writes on a thread of their own.
 *
 * A standalone SqliteChatStore commits on the caller's thread: the event loop waits for every
 * group COMMIT, fsync of the WAL included (a device flush can take tens of ms on a busy disk),
 * and nothing else is served meanwhile. Here one store is split across two connections to the
 * same file:
 *
 *     opening thread (event loop)               writer thread (writer-worker.ts)
 *     reads: its own connection, sync  ──┐      SqliteChatStore role 'writer':
 *     writes: { call: [id, sub, method, args] } ──▶   migrations, group commit,
 *                                       ◀── { touched, replies, stats }  checkpointer, TEMP triggers
 *     memos: dropped from `touched`, THEN the replies resolve
 *
 * - Every method listed in WRITE_METHODS (writer-protocol.ts) is called by name in the worker,
 *   with its arguments copied (structured clone); every other method runs on the reading
 *   connection here. The reading connection is `query_only`: a write method missing from the
 *   list fails at once.
 * - Acknowledged writes are visible: a reply leaves the worker after its COMMIT, and in WAL mode
 *   a statement started after a commit reads it. A read made while a write is still on its way
 *   may see the state before it, as it could before the write was issued.
 * - The memos of exclusive mode (gate answers, push devices) live here; the writer's triggers
 *   report the groups they touch, and those are dropped before the replies of the same batch
 *   resolve, so no acknowledged write leaves a stale answer behind (trigger-memo.ts).
 * - Each call goes to the worker at once (see call()); the worker's answers for one group commit
 *   come back in one message.
 * - If the worker dies, every pending and later call is rejected with the reason.
 *
 * The lock file of exclusive mode is taken here, before the worker starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChatStore, SqliteStoreConfig } from '../types.ts';
import { StoreClosedError } from '../errors.ts';
import { emptyBatcherStats, type BatcherStats } from './batcher.ts';
import { CallSlots } from './call-slots.ts';
import { FileLock } from './file-lock.ts';
import type { GateCacheStats } from './gate-cache.ts';
import type { Migration } from './migrations.ts';
import { SqliteChatStore } from './sqlite-store.ts';
import type { TriggerMemoStats } from './trigger-memo.ts';
import { receiveError, WRITE_METHODS, type FromWriter, type SentError, type ToWriter, type WriterData } from './writer-protocol.ts';

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The worker's entry: the .ts file under tsx (through tsx's loader), the bundle's sibling in dist/. */
function startWorker(data: WriterData): Worker {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const entry = new URL('./writer-worker.ts', here).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(boot, { eval: true, workerData: data });
  }
  return new Worker(new URL('./sqlite-writer.mjs', here), { workerData: data });
}

export class ThreadedSqliteStore implements ChatStore {
  readonly driver = 'sqlite' as const;
  readonly conversations: ChatStore['conversations'];
  readonly members: ChatStore['members'];
  readonly messages: ChatStore['messages'];
  readonly reactions: ChatStore['reactions'];
  readonly readState: ChatStore['readState'];
  readonly profiles: ChatStore['profiles'];
  readonly idempotency: ChatStore['idempotency'];
  readonly settings: ChatStore['settings'];
  readonly roleOverrides: ChatStore['roleOverrides'];
  readonly pushDevices: ChatStore['pushDevices'];

  private readonly waiting = new CallSlots<Waiting>();
  private batcherStats: BatcherStats = emptyBatcherStats();
  /** Set when the worker is gone (closed or died): every call is refused with it. */
  private gone: Error | null = null;
  private closing: Promise<void> | null = null;
  private closedBy: ((sent: SentError | undefined) => void) | null = null;
  private readonly lostListeners: Array<(error: Error) => void> = [];

  private constructor(
    private readonly worker: Worker,
    private readonly reader: SqliteChatStore,
    private readonly lock: FileLock | null,
    readonly appliedMigrations: string[],
  ) {
    const subs = Object.keys(WRITE_METHODS) as Array<keyof typeof WRITE_METHODS>;
    for (const sub of subs) {
      // The reader's sub-store, with each write method replaced by a call to the worker.
      const target = reader[sub] as unknown as Record<string, unknown>;
      for (const method of WRITE_METHODS[sub] as readonly string[]) {
        target[method] = (...args: unknown[]): Promise<unknown> => this.call(sub, method, args);
      }
    }
    this.conversations = reader.conversations;
    this.members = reader.members;
    this.messages = reader.messages;
    this.reactions = reader.reactions;
    this.readState = reader.readState;
    this.profiles = reader.profiles;
    this.idempotency = reader.idempotency;
    this.settings = reader.settings;
    this.roleOverrides = reader.roleOverrides;
    this.pushDevices = reader.pushDevices;
    worker.on('message', (message: FromWriter) => this.receive(message));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the SQLite writer thread exited (code ${code})`)));
  }

  /** Takes the lock (exclusive mode), starts the writer (migrations), then opens the reading connection. */
  static async open(config: SqliteStoreConfig, options: { migrations?: readonly Migration[] } = {}): Promise<ThreadedSqliteStore> {
    fs.mkdirSync(path.dirname(path.resolve(config.path)), { recursive: true });
    const lock = (config.mode ?? 'exclusive') === 'exclusive' ? FileLock.take(config.path) : null;
    let worker: Worker | null = null;
    try {
      worker = startWorker({ config, ...(options.migrations ? { migrations: options.migrations } : {}) });
      const w = worker;
      let onMessage: (m: FromWriter) => void = () => {};
      let onError: (e: Error) => void = () => {};
      let onExit: (code: number) => void = () => {};
      const applied = await new Promise<string[]>((resolve, reject) => {
        onMessage = (m) => {
          if ('ready' in m) resolve(m.appliedMigrations);
          else if ('openError' in m) reject(receiveError(m.openError));
        };
        onError = reject;
        onExit = (code) => reject(new Error(`the SQLite writer thread exited while opening (code ${code})`));
        w.on('message', onMessage).on('error', onError).on('exit', onExit);
      }).finally(() => w.off('message', onMessage).off('error', onError).off('exit', onExit));
      const reader = new SqliteChatStore(config, { role: 'reader' });
      return new ThreadedSqliteStore(worker, reader, lock, applied);
    } catch (error) {
      if (worker !== null) await worker.terminate();
      lock?.release();
      throw error;
    }
  }

  /** Group-commit counters of the writer, as of its last answer. */
  stats(): Readonly<BatcherStats> {
    const { commitBuckets, ...counts } = this.batcherStats;
    return { commitBuckets: [...commitBuckets], ...counts };
  }

  /** Writes sent to the writer thread and not answered yet. */
  writesInFlight(): number {
    return this.waiting.size;
  }

  gateCacheStats(): Readonly<GateCacheStats> | null {
    return this.reader.gateCacheStats();
  }

  deviceCacheStats(): Readonly<TriggerMemoStats> | null {
    return this.reader.deviceCacheStats();
  }

  profileCacheStats(): Readonly<TriggerMemoStats> | null {
    return this.reader.profileCacheStats();
  }

  /**
   * Posts the call at once. Calls are not held for the end of the loop turn: under load the
   * requests of one turn would then reach the writer as one wave after the thread had handled
   * them all, and the two threads would take turns instead of working side by side (measured:
   * ~15-25% fewer sends per second). Calls that arrive while the writer commits still share its
   * next commit.
   */
  private call(sub: string, method: string, args: unknown[]): Promise<unknown> {
    if (this.gone !== null) return Promise.reject(this.gone);
    if (this.closing !== null) return Promise.reject(new StoreClosedError()); // as the inline store
    return new Promise((resolve, reject) => {
      const id = this.waiting.add({ resolve, reject });
      try {
        this.worker.postMessage({ call: [id, sub, method, args] } satisfies ToWriter);
      } catch (error) {
        // An argument that cannot be copied (a function, a symbol): this call fails, not the store.
        this.settle(id, false, error);
      }
    });
  }

  private receive(message: FromWriter): void {
    if ('replies' in message) {
      const { touched, replies } = message;
      for (let i = 0; i < touched.length; i += 2) this.reader.touch(touched[i]!, touched[i + 1]!);
      this.batcherStats = message.stats;
      for (const reply of replies) {
        if (reply[1]) this.settle(reply[0], true, reply[2]);
        else this.settle(reply[0], false, receiveError(reply[2]));
      }
    } else if ('closed' in message) {
      this.closedBy?.(message.error);
      this.closedBy = null;
    }
  }

  private settle(id: number, ok: boolean, value: unknown): void {
    const w = this.waiting.take(id);
    if (w === undefined) return;
    if (ok) w.resolve(value);
    else w.reject(value);
  }

  /**
   * Calls `listener` if the writer thread ends while the store is open (a crash in the worker):
   * from then on every write fails, so a node stops being ready and exits (main.ts).
   */
  onWriterLost(listener: (error: Error) => void): void {
    this.lostListeners.push(listener);
  }

  /** The worker is gone: nothing pending will be answered. */
  private fail(error: Error): void {
    if (this.gone === null) {
      this.gone = error;
      if (this.closing === null) for (const listener of this.lostListeners) listener(error);
    }
    for (const id of this.waiting.ids()) this.settle(id, false, this.gone);
    // Closing and the worker died first: close() still finishes (and reports why).
    this.closedBy?.({ name: error.name, message: error.message, props: {} });
    this.closedBy = null;
  }

  async close(): Promise<void> {
    if (this.closing === null) this.closing = this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    // Calls made before close() are already with the worker; it commits them, answers, then closes.
    let failure: SentError | undefined;
    if (this.gone === null) {
      const closed = new Promise<SentError | undefined>((resolve) => (this.closedBy = resolve));
      this.worker.postMessage({ close: true } satisfies ToWriter);
      failure = await closed;
      this.gone = new StoreClosedError();
      await this.worker.terminate();
    }
    await this.reader.close();
    this.lock?.release();
    if (failure !== undefined) throw receiveError(failure);
  }
}
