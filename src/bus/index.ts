/**
 * The bus factory: one case per driver in BusConfig. The Redis Streams driver is one more case
 * here (and one member of the config union); the `never` check makes a forgotten case a compile
 * error.
 */
import { LocalBus } from './local-bus.ts';
import type { Bus, BusConfig } from './types.ts';

export type * from './types.ts';
export { BusClosedError, QueueFullError, defaultRetry } from './types.ts';
export { conversationChannel, parseChannel, userChannel, type ParsedChannel } from './channels.ts';

export function createBus<E, J>(config: BusConfig): Bus<E, J> {
  switch (config.driver) {
    case 'local':
      return new LocalBus<E, J>(config);
    default: {
      const unknown: never = config.driver;
      throw new Error(`unknown bus driver: ${String(unknown)}`);
    }
  }
}
