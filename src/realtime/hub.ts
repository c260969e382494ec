/**
 * The hub: one bus subscription per channel, shared by every stream on this node that follows the
 * channel (subscribed with the first stream, unsubscribed with the last).
 *
 * Built for many streams on one channel (10,000 on one CHANNEL in the fanout bench): each event is
 * turned into its SSE frame body (`event:` and `data:` lines, JSON serialized once) once per
 * channel; a stream only prepends its own `id:` line (its composite position, event-id.ts) and
 * writes. Keep-alive comments come from one timer for all streams, not one timer per stream.
 */
import type { BusEntry, EventStreams } from '../bus/index.ts';
import { toChatEvent, type ChatEventBody } from '../actors/events.ts';
import { channelTag } from './event-id.ts';

/** One event, ready to write: shared by every stream of the channel. */
export interface Frame {
  /** The channel's tag (event-id.ts). */
  tag: string;
  /** The bus id, and the same percent-encoded for the composite id. */
  id: string;
  encId: string;
  application_id: string;
  /** What a stream needs to see whether the event ends its right to a channel (stream.ts). */
  type: ChatEventBody['type'];
  conversation_id: string;
  /** The member a `member.added` / `member.removed` event is about; null for other types. */
  subject: string | null;
  /** `event: <type>\ndata: <json>\n\n`, UTF-8 encoded once: every stream writes these bytes. */
  body: Buffer;
}

/**
 * Counters of the node's streams, plain numbers for hot paths (one increment per event written);
 * src/metrics/stream-metrics.ts reads them at scrape time. Streams open = `Hub.size`.
 */
export interface StreamStats {
  /** Streams that joined the hub (credential accepted, headers sent). */
  opened: number;
  /** Streams that left it, for any reason (client gone, expired, cut off, node shutdown). */
  closed: number;
  /** Streams closed because their unsent output passed the bound (slow consumers). */
  cutOff: number;
  /** Bus events written to streams, one per stream (replays included; keep-alives and control events not). */
  eventsWritten: number;
}

/** What the hub needs of a stream. */
export interface HubStream {
  deliver(frame: Frame): void;
  keepAlive(): void;
  /** Ends the stream (node shutdown). */
  end(): void;
}

interface ChannelState {
  tag: string;
  streams: Set<HubStream>;
  unsubscribe: () => void;
  /**
   * The channel's newest position known here: the id of the last event seen since the hub
   * subscribed, or the bus's head once asked; null: neither yet.
   */
  lastId: string | null;
  /** The bus head request in flight, shared by the streams joining meanwhile. */
  head: Promise<string> | null;
}

export interface HubOptions {
  keepAliveMs: number;
  onError?: (err: unknown, channel: string) => void;
}

export function frameOf(tag: string, entry: BusEntry<ChatEventBody>): Frame {
  return {
    tag,
    id: entry.id,
    encId: encodeURIComponent(entry.id),
    application_id: entry.event.application_id,
    type: entry.event.type,
    conversation_id: entry.event.conversation_id,
    subject: entry.event.type === 'member.added' || entry.event.type === 'member.removed' ? entry.event.data.member.user_id : null,
    body: Buffer.from(`event: ${entry.event.type}\ndata: ${JSON.stringify(toChatEvent(entry))}\n\n`),
  };
}

export class Hub {
  private readonly channels = new Map<string, ChannelState>();
  private readonly streams = new Set<HubStream>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  readonly stats: StreamStats = { opened: 0, closed: 0, cutOff: 0, eventsWritten: 0 };

  constructor(
    private readonly bus: EventStreams<ChatEventBody>,
    private readonly opts: HubOptions,
  ) {
    this.timer = setInterval(() => this.keepAlive(), opts.keepAliveMs);
    this.timer.unref();
  }

  /** Streams open on this node. */
  get size(): number {
    return this.streams.size;
  }

  /** True once the node began shutting down: no stream may join. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Channels this node is subscribed to. */
  get channelCount(): number {
    return this.channels.size;
  }

  /** Adds `stream` to `channels` (subscribing the bus where it is the first). */
  join(stream: HubStream, channels: readonly string[]): void {
    if (this.closed) throw new Error('realtime hub is closed');
    this.streams.add(stream);
    this.stats.opened++;
    for (const channel of channels) {
      let st = this.channels.get(channel);
      if (st === undefined) st = this.open(channel);
      st.streams.add(stream);
    }
  }

  /**
   * A position on `channel` from which a stream that joined it sees every later event: the last
   * id seen here, or the bus's head (asked once per channel, however many streams join at once).
   * Every event after it either reaches the joined stream live or is answered by readSince.
   */
  position(channel: string): Promise<string> {
    const st = this.channels.get(channel);
    if (st === undefined) return this.bus.head(channel);
    if (st.lastId !== null) return Promise.resolve(st.lastId);
    st.head ??= this.bus.head(channel).then(
      (head) => {
        st.head = null;
        return (st.lastId ??= head);
      },
      (err: unknown) => {
        st.head = null;
        throw err;
      },
    );
    return st.head;
  }

  /** Removes `stream` from one channel only (it lost the right to it); the stream stays open. */
  leaveChannel(stream: HubStream, channel: string): void {
    const st = this.channels.get(channel);
    if (st === undefined || !st.streams.delete(stream)) return;
    if (st.streams.size === 0) {
      this.channels.delete(channel);
      st.unsubscribe();
    }
  }

  /** Removes `stream` everywhere (unsubscribing channels nobody follows any more). Idempotent. */
  leave(stream: HubStream, channels: readonly string[]): void {
    if (!this.streams.delete(stream)) return;
    this.stats.closed++;
    for (const channel of channels) {
      const st = this.channels.get(channel);
      if (st === undefined) continue;
      if (st.streams.delete(stream) && st.streams.size === 0) {
        this.channels.delete(channel);
        st.unsubscribe();
      }
    }
  }

  /** Ends every stream and drops every subscription. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const s of [...this.streams]) s.end();
    for (const st of this.channels.values()) st.unsubscribe();
    this.channels.clear();
    this.streams.clear();
  }

  private open(channel: string): ChannelState {
    const st: ChannelState = { tag: channelTag(channel), streams: new Set(), unsubscribe: () => undefined, lastId: null, head: null };
    this.channels.set(channel, st);
    st.unsubscribe = this.bus.subscribe(channel, (entry) => {
      st.lastId = entry.id;
      if (st.streams.size === 0) return;
      const frame = frameOf(st.tag, entry);
      for (const s of st.streams) {
        try {
          s.deliver(frame);
        } catch (err) {
          this.opts.onError?.(err, channel);
        }
      }
    });
    return st;
  }

  private keepAlive(): void {
    for (const s of this.streams) s.keepAlive();
  }
}
