/**
 * The realtime stream for a client (docs/realtime.md): opens `stream_url` with an EventSource,
 * keeps the last event id, and reconnects with a fresh credential and that id, so nothing is lost
 * or repeated across a dropped connection or a credential's expiry:
 *
 * - a dropped connection: the EventSource reconnects by itself with `Last-Event-ID`; when it gives
 *   up (the credential expired meanwhile: 401), a fresh credential is fetched and a new
 *   EventSource opened with `last_event_id` in its URL, with a backoff while that fails;
 * - expiry: shortly before `expires` (and on the `expired` event) the same, ahead of time;
 * - `reset` (the client was away longer than the resume window): `onReset`, to refetch state;
 * - `refresh()`: a new credential now (the user joined a CHANNEL: `member.added` about them).
 *
 * The EventSource constructor is injectable (a browser's, or the `eventsource` package in Node).
 */
import { CHAT_EVENT_TYPES, type ChatEvent } from './events.ts';

export interface EventSourceLike {
  readonly readyState: number;
  addEventListener(type: string, listener: (e: { data?: unknown; lastEventId?: string }) => void): void;
  onerror: ((e: unknown) => void) | null;
  close(): void;
}
export type EventSourceCtor = new (url: string) => EventSourceLike;

export type RealtimeStatus = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface RealtimeOptions {
  /** A fresh credential (GET .../notifications/realtime-token). */
  credential: () => Promise<{ stream_url: string; expires: number }>;
  onEvent: (event: ChatEvent) => void;
  /** Events were missed beyond the resume window: refetch what is shown. */
  onReset?: () => void;
  onStatus?: (status: RealtimeStatus) => void;
  EventSource?: EventSourceCtor;
  /** Reconnect this long before the credential expires (default 30 s). */
  renewBeforeMs?: number;
}

const CLOSED = 2;

export class RealtimeConnection {
  private source: EventSourceLike | null = null;
  private lastEventId = '';
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private failures = 0;
  /** Bumped on every (re)connect, so callbacks of a replaced EventSource are ignored. */
  private generation = 0;

  constructor(private readonly options: RealtimeOptions) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  /** Reconnects now with a fresh credential, resuming from the last event. */
  refresh(): void {
    if (!this.stopped) void this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.source?.close();
    this.source = null;
    this.generation++;
    this.options.onStatus?.('closed');
  }

  /** The id to resume from (opaque). */
  get position(): string {
    return this.lastEventId;
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    this.clearTimer();
    this.source?.close();
    this.source = null;
    this.options.onStatus?.(this.lastEventId === '' ? 'connecting' : 'reconnecting');
    let cred: { stream_url: string; expires: number };
    try {
      cred = await this.options.credential();
    } catch {
      if (generation === this.generation) this.retryLater();
      return;
    }
    if (this.stopped || generation !== this.generation) return;
    const Ctor = this.options.EventSource ?? (globalThis as unknown as { EventSource: EventSourceCtor }).EventSource;
    const url = this.lastEventId === '' ? cred.stream_url : `${cred.stream_url}&last_event_id=${encodeURIComponent(this.lastEventId)}`;
    const source = new Ctor(url);
    this.source = source;
    const mine = () => generation === this.generation;
    const track = (e: { lastEventId?: string }) => {
      if (e.lastEventId) this.lastEventId = e.lastEventId;
    };
    source.addEventListener('ready', (e) => {
      if (!mine()) return;
      track(e);
      this.failures = 0;
      this.options.onStatus?.('open');
    });
    source.addEventListener('reset', (e) => {
      if (!mine()) return;
      track(e);
      this.options.onReset?.();
    });
    source.addEventListener('expired', () => {
      if (mine()) void this.connect();
    });
    for (const type of CHAT_EVENT_TYPES) {
      source.addEventListener(type, (e) => {
        if (!mine()) return;
        track(e);
        let event: ChatEvent;
        try {
          event = JSON.parse(String(e.data)) as ChatEvent;
        } catch {
          return;
        }
        this.options.onEvent(event);
      });
    }
    source.onerror = () => {
      if (!mine()) return;
      // CONNECTING: the EventSource retries by itself with Last-Event-ID. CLOSED: it gave up.
      if (source.readyState === CLOSED) this.retryLater();
      else this.options.onStatus?.('reconnecting');
    };
    const renewIn = Math.max(1000, cred.expires - Date.now() - (this.options.renewBeforeMs ?? 30_000));
    this.timer = setTimeout(() => {
      if (mine()) void this.connect();
    }, renewIn);
  }

  private retryLater(): void {
    if (this.stopped) return;
    this.clearTimer();
    this.options.onStatus?.('reconnecting');
    const delay = Math.min(30_000, 500 * 2 ** this.failures) * (0.5 + Math.random() / 2);
    this.failures++;
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
