/**
 * What the bus reports about live delivery (Bus config `onListenerError`): gaps (a Redis failover
 * lost events, or a shard's history was dropped: LiveGapError, FanGapError; the streams of those
 * channels are told to resume) and listeners that threw. One gap of the fan log reaches every
 * fanned channel with a listener on the node, thousands at once: each was one log line. Now they
 * are counted (`chat_bus_listener_errors_total{kind="gap"|"listener"}`) and logged once per
 * kind and error message per window (1 s), with how many channels had it and one of them.
 */
import { Counter, type Registry } from 'prom-client';
import { FanGapError, LiveGapError } from '../bus/index.ts';

export type BusErrorKind = 'gap' | 'listener';

interface Pending {
  kind: BusErrorKind;
  error: string;
  channels: number;
  channel: string;
}

export class BusErrorReport {
  private readonly counter: Counter<'kind'>;
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    registry: Registry,
    private readonly log: (obj: Record<string, unknown>, msg: string) => void,
    private readonly windowMs = 1000,
  ) {
    this.counter = new Counter({
      name: 'chat_bus_listener_errors_total',
      help: 'Live delivery problems per channel: gap (events lost, the streams resume), listener (a listener threw)',
      labelNames: ['kind'],
      registers: [registry],
    });
    // Both series from the start (at 0), so a dashboard's rate() has something to read.
    for (const kind of ['gap', 'listener'] as const) this.counter.inc({ kind }, 0);
  }

  /** The bus's onListenerError. */
  readonly handle = (error: unknown, channel: string): void => {
    const kind: BusErrorKind = error instanceof LiveGapError || error instanceof FanGapError ? 'gap' : 'listener';
    this.counter.inc({ kind });
    const message = error instanceof Error ? error.message : String(error);
    const key = `${kind}\u0000${message}`;
    const p = this.pending.get(key);
    if (p) p.channels += 1;
    else this.pending.set(key, { kind, error: message, channels: 1, channel });
    if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), this.windowMs);
      this.timer.unref();
    }
  };

  /** Logs what the window gathered. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    for (const p of this.pending.values()) {
      this.log({ err: p.error, channels: p.channels, channel: p.channel }, p.kind === 'gap' ? 'bus delivery gap: these channels lost live events; their streams resume' : 'bus listener failed');
    }
    this.pending.clear();
  }
}
