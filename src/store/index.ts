/**
 * The store factory: one case per driver in StoreConfig; the `never` check makes a forgotten
 * case a compile error.
 */
import { CassandraChatStore } from './cassandra/cassandra-store.ts';
import { SqliteChatStore } from './sqlite/sqlite-store.ts';
import { ThreadedSqliteStore } from './sqlite/writer-thread.ts';
import type { ChatStore, StoreConfig } from './types.ts';

export type * from './types.ts';
export * from './errors.ts';
export { IDEMPOTENCY_PENDING_TTL_MS, IDEMPOTENCY_TTL_MS } from './types-tenant.ts';
export { sqliteStorePath } from './sqlite/sqlite-store.ts';

/** Opens the store (migrations applied) and answers once it is ready for reads and writes. */
export async function createStore(config: StoreConfig): Promise<ChatStore> {
  switch (config.driver) {
    case 'sqlite':
      return (config.writer ?? 'thread') === 'thread' ? ThreadedSqliteStore.open(config) : new SqliteChatStore(config);
    case 'cassandra':
      return CassandraChatStore.open(config);
    default: {
      const unknown: never = config;
      throw new Error(`unknown store driver: ${String((unknown as { driver?: unknown }).driver)}`);
    }
  }
}
