/**
 * The presence factory: one case per driver of PresenceConfig (the `never` check makes a
 * forgotten case a compile error).
 */
import { MemoryPresence } from './memory-presence.ts';
import { RedisPresence } from './redis-presence.ts';
import type { Presence, PresenceConfig } from './types.ts';

export type { Presence, PresenceConfig, PresenceEntry, PresenceStatus, RedisPresenceConfig } from './types.ts';
export { OnlineMemo } from './online-memo.ts';

export function createPresence(config: PresenceConfig): Presence {
  switch (config.driver) {
    case 'memory':
      return new MemoryPresence(config);
    case 'redis':
      return new RedisPresence(config);
    default: {
      const unknown: never = config;
      throw new Error(`unknown presence driver: ${String((unknown as { driver?: unknown }).driver)}`);
    }
  }
}
