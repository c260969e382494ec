/**
 * Realtime stream metrics, read from the hub's plain counters at scrape time (the hot path only
 * increments numbers: one per event written per stream):
 *
 *   chat_realtime_streams_open                 streams open on this node (gauge)
 *   chat_realtime_channels                     bus channels this node is subscribed to (gauge)
 *   chat_realtime_streams_opened_total         streams accepted (credential valid, headers sent)
 *   chat_realtime_streams_closed_total         streams ended, whatever the reason
 *   chat_realtime_slow_consumers_total         streams cut off: unsent output passed CHAT_REALTIME_MAX_BUFFERED_BYTES
 *   chat_realtime_events_written_total         bus events written to streams, one per stream (replays included)
 *   chat_realtime_streams_refused_total{cap}   streams refused by a cap: cap="user" (CHAT_REALTIME_MAX_STREAMS_PER_USER)
 *                                              or cap="node" (CHAT_REALTIME_MAX_STREAMS)
 *
 * No other labels: a stream's user, channel or tenant is an id, and ids never become labels.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { scrapedCounter } from './scraped.ts';

/** What the metrics read of a node's streams (src/realtime/hub.ts `Hub` is one). */
export interface StreamSource {
  readonly size: number;
  readonly channelCount: number;
  readonly stats: {
    readonly opened: number;
    readonly closed: number;
    readonly cutOff: number;
    readonly eventsWritten: number;
    readonly refusedUserCap: number;
    readonly refusedNodeCap: number;
  };
}

export function registerStreamMetrics(registry: Registry, source: StreamSource): void {
  new Gauge({
    name: 'chat_realtime_streams_open',
    help: 'Realtime (SSE) streams open on this node',
    registers: [registry],
    collect() {
      this.set(source.size);
    },
  });
  new Gauge({
    name: 'chat_realtime_channels',
    help: 'Bus channels this node is subscribed to for its streams (one subscription per channel, shared by its streams)',
    registers: [registry],
    collect() {
      this.set(source.channelCount);
    },
  });
  const counter = (name: string, help: string, read: () => number): void => scrapedCounter(registry, name, help, read);
  counter('chat_realtime_streams_opened_total', 'Realtime streams accepted (credential valid, headers sent)', () => source.stats.opened);
  counter('chat_realtime_streams_closed_total', 'Realtime streams ended: client gone, credential expired, cut off, or node shutdown', () => source.stats.closed);
  counter('chat_realtime_slow_consumers_total', 'Realtime streams cut off because their unsent output passed CHAT_REALTIME_MAX_BUFFERED_BYTES', () => source.stats.cutOff);
  new Counter({
    name: 'chat_realtime_streams_refused_total',
    help: 'Realtime streams refused by a cap: cap="user" (CHAT_REALTIME_MAX_STREAMS_PER_USER, 429) or cap="node" (CHAT_REALTIME_MAX_STREAMS, 503)',
    labelNames: ['cap'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ cap: 'user' }, source.stats.refusedUserCap);
      this.inc({ cap: 'node' }, source.stats.refusedNodeCap);
    },
  });
  counter('chat_realtime_events_written_total', 'Bus events written to realtime streams, one per stream (replayed events included; keep-alives and control events not)', () => source.stats.eventsWritten);
}
