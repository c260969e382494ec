/**
 * The presence factory: one case per driver of PresenceConfig (a Redis driver arrives with the
 * cluster issue; the `never` check makes a forgotten case a compile error).
 */
import { MemoryPresence } from './memory-presence.ts';
import type { Presence, PresenceConfig } from './types.ts';

export type { Presence, PresenceConfig, PresenceEntry, PresenceStatus } from './types.ts';

export function createPresence(config: PresenceConfig): Presence {
  switch (config.driver) {
    case 'memory':
      return new MemoryPresence(config);
    default: {
      const unknown: never = config.driver;
      throw new Error(`unknown presence driver: ${String(unknown)}`);
    }
  }
}
