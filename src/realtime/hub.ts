/**
 * The hub: one bus subscription per channel, shared by every stream on this node that follows the
 * channel (subscribed with the first stream, unsubscribed with the last).
 *
 * Built for many streams on one channel (10,000 on one CHANNEL in the fanout bench) and for one
 * event on many channels (a GROUP message reaches every member's own channel): an event's JSON
 * is serialized once (by the bus, which hands it over with the entry), and its frame is one small
 * per-channel head (`event:` line and the start of `data:` with the channel's bus id) and one
 * tail shared by every channel of the event (the rest of the JSON, UTF-8 encoded once). A stream
 * only writes its own `id:` line (its composite position, event-id.ts), the head and the shared
 * tail. Keep-alive comments come from one timer for all streams, not one timer per stream.
 *
 * It also holds the node's caps on streams (per user, and in all): each stream may hold up to
 * CHAT_REALTIME_MAX_BUFFERED_BYTES of unsent output, so the caps bound what streams can make a
 * node hold (one credential opened 1,000 streams, about 1 GB, before them).
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
  /**
   * The frame after the `id:` line is `head` + `tail`: `event: <type>\ndata: <envelope JSON>\n\n`,
   * the envelope being `{"id": <bus id>, ...event}`. `head` ends just after the id; `tail` is the
   * rest, the same bytes for every channel the event was published to.
   */
  head: string;
  tail: Buffer;
}

/** The bytes of a frame after its `id:` line (tests, and anyone who wants it whole). */
export function frameText(frame: Frame): string {
  return frame.head + frame.tail.toString('utf8');
}

/**
 * The shared tail of an event's frames from its JSON: the envelope's fields after `id`. The
 * envelope is `{"id":…,` followed by the event's own JSON without its `{`, byte for byte what
 * JSON.stringify({ id, ...event }) gives (events have no `id` field of their own).
 */
export function frameTail(json: string): Buffer {
  return Buffer.from(json.length > 2 ? `,${json.slice(1)}\n\n` : '}\n\n');
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
  /** Streams refused because their user already held `maxStreamsPerUser` on this node. */
  refusedUserCap: number;
  /** Streams refused because the node already held `maxStreams`. */
  refusedNodeCap: number;
}

/** What the hub needs of a stream. */
export interface HubStream {
  /** Whose stream it is (tenant and user), for the per-user cap; absent: not counted per user. */
  readonly owner?: string;
  deliver(frame: Frame): void;
  keepAlive(): void;
  /** Ends the stream (node shutdown; live delivery of one of its channels skipped events). */
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
  /** Streams this node holds at most (default: no cap). */
  maxStreams?: number;
  /** Streams one owner (a user of a tenant) holds on this node at most (default: no cap). */
  maxStreamsPerUser?: number;
  onError?: (err: unknown, channel: string) => void;
}

/** Which cap a new stream would pass. */
export type StreamCap = 'user' | 'node';

/** The owner key of a user's streams (HubStream.owner). */
export const streamOwner = (tenant_id: string, user_id: string): string => `${tenant_id}\n${user_id}`;

/** The frame of `entry` on the channel tagged `tag`; `tail` when the caller has the event's already. */
export function frameOf(tag: string, entry: BusEntry<ChatEventBody>, tail?: Buffer): Frame {
  const event = entry.event;
  return {
    tag,
    id: entry.id,
    encId: encodeURIComponent(entry.id),
    application_id: event.application_id,
    type: event.type,
    conversation_id: event.conversation_id,
    subject: event.type === 'member.added' || event.type === 'member.removed' ? event.data.member.user_id : null,
    head: `event: ${event.type}\ndata: {"id":${JSON.stringify(entry.id)}`,
    tail: tail ?? frameTail(entry.json ?? JSON.stringify(event)),
  };
}

export class Hub {
  private readonly channels = new Map<string, ChannelState>();
  private readonly streams = new Set<HubStream>();
  /** Streams open per owner (only owners with at least one). */
  private readonly perOwner = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  readonly maxStreams: number;
  readonly maxStreamsPerUser: number;
  /** The last event framed and its tail: the next channel of the same publish reuses the tail. */
  private lastEvent: ChatEventBody | null = null;
  private lastTail: Buffer = Buffer.alloc(0);
  readonly stats: StreamStats = { opened: 0, closed: 0, cutOff: 0, eventsWritten: 0, refusedUserCap: 0, refusedNodeCap: 0 };

  constructor(
    private readonly bus: EventStreams<ChatEventBody>,
    private readonly opts: HubOptions,
  ) {
    this.timer = setInterval(() => this.keepAlive(), opts.keepAliveMs);
    this.timer.unref();
    this.maxStreams = opts.maxStreams ?? Number.POSITIVE_INFINITY;
    this.maxStreamsPerUser = opts.maxStreamsPerUser ?? Number.POSITIVE_INFINITY;
  }

  /**
   * The cap a new stream of `owner` would pass, counted as refused; null: it may join. Asked in
   * the same uWS callback as the join that follows, so nothing joins in between.
   */
  refusal(owner: string): StreamCap | null {
    if ((this.perOwner.get(owner) ?? 0) >= this.maxStreamsPerUser) {
      this.stats.refusedUserCap++;
      return 'user';
    }
    if (this.streams.size >= this.maxStreams) {
      this.stats.refusedNodeCap++;
      return 'node';
    }
    return null;
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
    if (stream.owner !== undefined) this.perOwner.set(stream.owner, (this.perOwner.get(stream.owner) ?? 0) + 1);
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
    // A bus whose positions move without events of the channel knows a fresher one.
    const current = this.bus.current?.(channel) ?? null;
    if (current !== null) return Promise.resolve(current);
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
    if (stream.owner !== undefined) {
      const left = (this.perOwner.get(stream.owner) ?? 1) - 1;
      if (left > 0) this.perOwner.set(stream.owner, left);
      else this.perOwner.delete(stream.owner);
    }
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
    this.perOwner.clear();
    this.lastEvent = null;
  }

  private open(channel: string): ChannelState {
    const st: ChannelState = { tag: channelTag(channel), streams: new Set(), unsubscribe: () => undefined, lastId: null, head: null };
    this.channels.set(channel, st);
    st.unsubscribe = this.bus.subscribe(
      channel,
      (entry) => {
        st.lastId = entry.id;
        if (st.streams.size === 0) return;
        if (entry.event !== this.lastEvent) {
          this.lastEvent = entry.event;
          this.lastTail = frameTail(entry.json ?? JSON.stringify(entry.event));
        }
        const frame = frameOf(st.tag, entry, this.lastTail);
        for (const s of st.streams) {
          try {
            s.deliver(frame);
          } catch (err) {
            this.opts.onError?.(err, channel);
          }
        }
      },
      // Live delivery skipped events (a Redis failover): the channel's streams end, and their
      // clients resume with Last-Event-ID (a `reset` if the window no longer holds it), so none
      // goes on as if nothing was missed.
      () => {
        st.lastId = null;
        st.head = null;
        for (const s of [...st.streams]) s.end();
      },
    );
    return st;
  }

  private keepAlive(): void {
    for (const s of this.streams) s.keepAlive();
  }
}
