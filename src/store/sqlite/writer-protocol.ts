/**
 * What the opening thread and the writer thread of the SQLite driver say to each other
 * (writer-thread.ts, writer-worker.ts): the write methods that cross, the messages, and errors
 * sent as data and rebuilt with their classes, so callers still branch with `instanceof`.
 */
import Database from 'better-sqlite3';
import type { Migration } from './migrations.ts';
import type { BatcherStats } from './batcher.ts';
import type { ChatStore, SqliteStoreConfig } from '../types.ts';
import { IdConflictError, InvalidPositionError, SeqConflictError, StaleEpochError, StoreClosedError } from '../errors.ts';

type SubStore = Exclude<keyof ChatStore, 'driver' | 'close'>;
type MethodOf<S extends SubStore> = { [M in keyof ChatStore[S]]: ChatStore[S][M] extends (...args: never[]) => Promise<unknown> ? M : never }[keyof ChatStore[S]];

/**
 * Every method of the store that writes: these run in the writer thread; every other method runs
 * on the opening thread's own connection. The reading connection refuses writes (query_only and
 * SqliteHandle), so a write method missing here fails loudly in the contract suite.
 */
export const WRITE_METHODS: { readonly [S in SubStore]: readonly MethodOf<S>[] } = {
  conversations: ['create', 'claim', 'update', 'softDelete'],
  members: ['add', 'setStatus', 'setRole'],
  messages: ['append', 'edit', 'tombstone', 'deleteExpired'],
  reactions: ['add', 'remove'],
  readState: ['markRead'],
  profiles: ['upsert'],
  idempotency: ['claim', 'complete', 'release', 'sweep'],
  settings: ['update'],
  roleOverrides: ['set', 'delete'],
  pushDevices: ['upsert', 'delete', 'deleteEndpoint'],
};

export interface WriterData {
  config: SqliteStoreConfig;
  migrations?: readonly Migration[];
}

/** Opening thread → writer: one call, [id, sub-store, method, args], or the request to close. */
export type ToWriter = { call: [number, string, string, unknown[]] } | { close: true };

/** A call's outcome: [id, true, value] or [id, false, error]. */
export type Reply = [number, true, unknown] | [number, false, SentError];

/** Writer → opening thread. */
export type FromWriter =
  | { ready: true; appliedMigrations: string[] }
  | { openError: SentError }
  /** Memo groups touched (invalidate first), then the outcomes they belong with. */
  | { touched: string[]; replies: Reply[]; stats: BatcherStats }
  | { closed: true; error?: SentError };

export interface SentError {
  name: string;
  message: string;
  stack?: string;
  /** Own enumerable properties (code, conversation_id, ...). */
  props: Record<string, unknown>;
}

export function sendError(error: unknown): SentError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), props: {} };
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(error)) {
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) props[k] = v;
  }
  return { name: error.name, message: error.message, stack: error.stack, props };
}

const CLASSES: Record<string, { prototype: object }> = {
  StaleEpochError,
  SeqConflictError,
  IdConflictError,
  InvalidPositionError,
  StoreClosedError,
  SqliteError: Database.SqliteError,
  RangeError,
  TypeError,
  SyntaxError,
};

/** The error again, of its class when it is one callers tell apart (errors.ts, SqliteError, RangeError...). */
export function receiveError(sent: SentError): Error {
  const error = Object.create((CLASSES[sent.name] ?? Error).prototype) as Error;
  Object.defineProperty(error, 'message', { value: sent.message, writable: true, configurable: true });
  Object.defineProperty(error, 'stack', { value: sent.stack ?? `${sent.name}: ${sent.message}`, writable: true, configurable: true });
  if (error.name !== sent.name) Object.defineProperty(error, 'name', { value: sent.name, writable: true, configurable: true });
  Object.assign(error, sent.props);
  return error;
}
