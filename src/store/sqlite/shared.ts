/**
 * What every table file of the SQLite driver shares: the connection, the write path (group
 * commit) and the read path, plus small row helpers.
 *
 * Reads run synchronously inside a deferred transaction, so a read made of several statements
 * (a page plus its reactions, a conversation plus its member preview) sees one snapshot even
 * while other processes write the file (shared-file mode). They never interleave with a batch:
 * both are synchronous, so a read sees committed state only.
 */
import type Database from 'better-sqlite3';
import { StoreClosedError } from '../errors.ts';
import type { WriteBatcher } from './batcher.ts';

export type Db = Database.Database;

export class SqliteHandle {
  private closed = false;
  private readonly readTx: (fn: () => unknown) => unknown;

  constructor(
    readonly db: Db,
    readonly writer: WriteBatcher,
    /** False on the reading connection of the writer thread (writer-thread.ts): writes go there. */
    private readonly writable = true,
  ) {
    this.readTx = db.transaction((fn: () => unknown) => fn()).deferred;
  }

  /** Runs a synchronous read in one snapshot; a throw becomes a rejection. */
  read<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    try {
      return Promise.resolve(this.readTx(fn) as T);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Runs a read made of ONE statement (its own snapshot), without a transaction around it. */
  readOne<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Throws StoreClosedError once the store is closed (for synchronous reads). */
  assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /** Queues a synchronous write op for the next group commit (see batcher.ts). */
  write<T>(op: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    if (!this.writable) return Promise.reject(new Error('a write reached the reading connection: it belongs to the writer thread'));
    return this.writer.run(op);
  }

  markClosed(): void {
    this.closed = true;
  }
}

/** Parses a JSON column the schema guarantees valid (CHECK json_valid). */
export function parseJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export { checkEpoch } from '../inputs.ts';

/** Bind value for `IN (SELECT value FROM json_each(?))`: one statement for any list length. */
export function jsonList(values: readonly string[]): string {
  return JSON.stringify(values);
}
