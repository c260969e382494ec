/**
 * The store factory: one case per driver in StoreConfig. The Cassandra driver is one more case
 * here (and one member of the config union); the `never` check makes a forgotten case a compile
 * error.
 */
import { SqliteChatStore } from './sqlite/sqlite-store.ts';
import type { ChatStore, StoreConfig } from './types.ts';

export type * from './types.ts';
export * from './errors.ts';
export { IDEMPOTENCY_PENDING_TTL_MS, IDEMPOTENCY_TTL_MS } from './types-tenant.ts';
export { sqliteStorePath } from './sqlite/sqlite-store.ts';

/** Opens the store (migrations applied) and answers once it is ready for reads and writes. */
export async function createStore(config: StoreConfig): Promise<ChatStore> {
  switch (config.driver) {
    case 'sqlite':
      return new SqliteChatStore(config);
    default: {
      const unknown: never = config.driver;
      throw new Error(`unknown store driver: ${String(unknown)}`);
    }
  }
}
