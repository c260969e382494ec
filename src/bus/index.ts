/**
 * The bus factory: one case per driver in BusConfig (`local`: in-process; `redis`: Redis
 * Streams, docs/bus.md); the `never` check makes a forgotten case a compile error.
 */
import { LocalBus } from './local-bus.ts';
import { RedisStreamsBus } from './redis-streams-bus.ts';
import type { Bus, BusConfig } from './types.ts';

export type * from './types.ts';
export { BusClosedError, MAX_FAN_SHARDS, QueueFullError, defaultRetry } from './types.ts';
export { conversationChannel, parseChannel, userChannel, type ParsedChannel } from './channels.ts';
export { LiveGapError } from './redis-event-streams.ts';
export { FanGapError } from './redis-fan-log.ts';

export function createBus<E, J>(config: BusConfig): Bus<E, J> {
  switch (config.driver) {
    case 'local':
      return new LocalBus<E, J>(config);
    case 'redis':
      return new RedisStreamsBus<E, J>(config);
    default: {
      const unknown: never = config;
      throw new Error(`unknown bus driver: ${String((unknown as BusConfig).driver)}`);
    }
  }
}
