/**
 * The SSE endpoint: `GET {API_PREFIX}/realtime/stream?credential=...` on uWebSockets.js, outside
 * the JSON route table (the credential is the only authentication; see credential.ts).
 *
 *   verify credential (401 invalid_token, the contract's error body)
 *   ──► 200 text/event-stream ──► join the hub (live events wait until `ready` is out)
 *   ──► per channel: a position in Last-Event-ID → readSince; none → the hub's position (bus head)
 *   ──► `reset` if any readSince reset ──► `ready` ──► replayed events, in order, then held-back
 *   ──► live events ... keep-alive comments ... `expired` at the credential's expiry
 *
 * Every id the stream writes, `ready`'s included, carries a position for every channel it
 * follows (event-id.ts), so a channel silent during a whole connection still resumes.
 *
 * Membership is checked when the credential is issued; while the stream runs it drops a
 * conversation's channel at the event that ends the right to it: `member.removed` of this user
 * (on the conversation's channel or on the user's own channel, whichever comes first) or
 * `conversation.deleted`. That event is delivered, nothing after it from that channel is, and
 * the channel's position becomes DROPPED_PREFIX + the credential's expiry, so a reconnect with
 * the same (stale) credential does not follow the channel again; a fresh credential, issued
 * after a re-add, does (from its head).
 *
 * uWS rules: the URL, query and headers are read in the callback before anything else; every
 * write after an await or from a bus listener is corked; `res.write`'s answer drives the
 * slow-consumer bound (onWritable clears it; getWriteOffset is not used: it stays 0 in this
 * build); nothing is written after onAborted.
 */
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { EventStreams } from '../bus/index.ts';
import type { ChatEventBody } from '../actors/events.ts';
import { ApiError } from '../errors/catalog.ts';
import { BodyReader, tooLarge } from '../http/body.ts';
import { hasBody, readFraming, shownPath, targetTooLong } from '../http/framing.ts';
import { answerAndClose, answerAndLinger } from '../http/linger.ts';
import { sendError, type Exchange } from '../http/respond.ts';
import type { RealtimeCredentials, RealtimeGrant } from './credential.ts';
import { conversationChannel, parseChannel } from '../bus/channels.ts';
import { DROPPED_PREFIX, channelTag, encodePositions, parseEventId } from './event-id.ts';
import { frameOf, streamOwner, type Frame, type Hub, type HubStream, type StreamCap } from './hub.ts';

export interface StreamOptions {
  /** A stream whose unsent output passes this many bytes is closed (it reconnects and resumes). */
  maxBufferedBytes: number;
  /** Sent as the `retry:` field: the client's reconnect delay. */
  retryMs: number;
  /** The request body limit (CHAT_BODY_LIMIT_BYTES): a body past it is `payload_too_large`. */
  bodyLimitBytes?: number;
  /** CHAT_REALTIME_FLUSH_MS: live frames gathered per turn of the event loop (0) or per N ms. */
  flushMs?: number;
}

/**
 * Streams with live frames waiting to be written. A GROUP message reaches each member's stream
 * as one frame; written at once, that is one socket write (a syscall, and on loopback the
 * receiver's TCP work too) per frame per stream. Gathered, a stream's frames of one turn of the
 * event loop (a group commit's sends are published in one turn), or of `flushMs`, leave in one
 * corked write. Writing each frame at once from the publish path instead was measured to cost
 * the fan-out to 10,000 streams most of its capacity (p99 1,480 and 3,068 ms against 265, 470 and
 * 776 ms gathered, alternating runs, 2026-11-26; docs/benchmarks.md "fanout"). Likely cause, not
 * confirmed: the publish runs inside another socket's uWS callback, which has that socket
 * corked, so the streams' corks do not hold; the flush runs from setImmediate, outside any.
 */
const dirty: Stream[] = [];
let flushing: 'immediate' | 'timer' | null = null;

function flushDirty(): void {
  flushing = null;
  const streams = dirty.splice(0, dirty.length);
  for (const s of streams) s.flushLive();
}

function scheduleFlush(s: Stream, flushMs: number): void {
  dirty.push(s);
  if (flushing !== null) return;
  if (flushMs > 0) {
    flushing = 'timer';
    setTimeout(flushDirty, flushMs);
  } else {
    flushing = 'immediate';
    setImmediate(flushDirty);
  }
}

/**
 * The stream's request target (path and query) at most: the credential names up to 256 channels
 * and `last_event_id` carries a position for each, so it is longer than the JSON API's.
 */
export const MAX_STREAM_TARGET_BYTES = 32 * 1024;

export interface StreamDeps {
  hub: Hub;
  bus: EventStreams<ChatEventBody>;
  credentials: RealtimeCredentials;
  options: StreamOptions;
  /**
   * At each connect: which conversations of the grant the user may still read (an ACTIVE
   * member, or a PUBLIC channel). The stream drops the others before `ready`, so a credential
   * issued before a removal never brings the conversation back, with or without Last-Event-ID.
   * Absent: the grant is trusted for its lifetime (unit tests of the stream alone).
   */
  readable?: (grant: RealtimeGrant, conversation_ids: string[]) => Promise<ReadonlySet<string>>;
  onError?: (err: unknown) => void;
}

const KEEP_ALIVE = ': ka\n\n';

/** One open stream. */
class Stream implements HubStream {
  /** tag → percent-encoded position per channel of the grant (the composite id), in grant order. */
  private readonly positions = new Map<string, string>();
  /** tag → channel, for the channels followed: the grant's, minus those dropped. */
  private readonly followed = new Map<string, string>();
  /** The position of a channel this stream (or an earlier one on the same credential) dropped. */
  private readonly dropped: string;
  /** Live events that arrived before `ready` went out; null once live. */
  private pending: Frame[] | null = [];
  /** Live frames (each its id line, then its shared tail) waiting for the flush; null: none. */
  private live: Array<string | Buffer> | null = null;
  private choked = false;
  private buffered = 0;
  closed = false;
  aborted = false;
  private expiry: NodeJS.Timeout | null = null;
  /** tag → the hub's position on the channel when this stream joined it (see open). */
  private readonly joinedAt = new Map<string, Promise<string>>();
  /** The user (of a tenant) the hub counts this stream against. */
  readonly owner: string;

  /** `known`: the positions of Last-Event-ID; channels it marks dropped are not followed. */
  constructor(
    private readonly res: HttpResponse,
    readonly grant: RealtimeGrant,
    private readonly deps: StreamDeps,
    known: ReadonlyMap<string, string>,
  ) {
    this.dropped = `${DROPPED_PREFIX}${grant.expires}`;
    this.owner = streamOwner(grant.tenant_id, grant.user_id);
    for (const channel of grant.channels) {
      const tag = channelTag(channel);
      if (known.get(tag) === this.dropped) this.positions.set(tag, encodeURIComponent(this.dropped));
      else this.followed.set(tag, channel);
    }
  }

  /** The channels followed, in grant order. */
  get channels(): string[] {
    return [...this.followed.values()];
  }

  /** Inside the uWS callback: headers out, hub joined (live events held back until `start`). */
  open(): void {
    const { res } = this;
    res.onAborted(() => {
      this.aborted = true;
      this.shutdown();
    });
    res.onWritable(() => {
      this.choked = false;
      this.buffered = 0;
      return true;
    });
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.writeHeader('Cache-Control', 'no-cache, no-transform');
    res.writeHeader('X-Accel-Buffering', 'no');
    res.writeHeader('Access-Control-Allow-Origin', '*');
    res.write(`retry: ${this.deps.options.retryMs}\n\n`);
    this.deps.hub.join(this, this.channels);
    // Asked now, in the callback: a channel that Last-Event-ID gives no position on (or all of
    // them, after a reset) starts where it was when the stream joined, so no event held back
    // until `ready` lies before the position `ready` carries. (On Redis a head may race a
    // concurrent publish: such an event may then come after `ready` with an id at or before
    // it: a duplicate on a later resume, never a miss.) The hub answers from memory once it
    // has seen an event or a head on the channel.
    for (const [tag, channel] of this.followed) {
      const position = this.deps.hub.position(channel);
      position.catch(() => undefined); // awaited in start(), which reports a failure
      this.joinedAt.set(tag, position);
    }
    this.expiry = setTimeout(() => this.expire(), Math.max(0, this.grant.expires - Date.now()));
  }

  /**
   * Positions every followed channel, then writes `reset` (if one was needed), `ready` and what
   * was replayed and held back. `known` null: Last-Event-ID was given but is not ours.
   */
  async start(known: ReadonlyMap<string, string> | null, resuming: boolean): Promise<void> {
    await this.checkReadable();
    const from = new Map<string, string>();
    const replayed = new Map<string, Frame[]>();
    /** tag → the bus's `through` (the last live event before the replay's end; types.ts). */
    const through = new Map<string, string>();
    let reset = known === null;
    await Promise.all(
      [...this.followed].map(async ([tag, channel]) => {
        const id = known?.get(tag);
        if (id === undefined || id.startsWith(DROPPED_PREFIX)) return; // new to this stream, or dropped under another credential
        const r = await this.deps.bus.readSince(channel, id);
        if (r.reset) reset = true;
        else {
          from.set(tag, id);
          replayed.set(tag, r.events.map((e) => frameOf(tag, e)));
          if (r.through !== undefined) through.set(tag, r.through);
        }
      }),
    );
    if (reset) {
      from.clear();
      replayed.clear();
      through.clear();
    }
    // Channels without a position start where they were when the stream joined them.
    await Promise.all(
      [...this.joinedAt].map(async ([tag, position]) => {
        if (!from.has(tag)) from.set(tag, await position);
      }),
    );
    this.joinedAt.clear();
    if (this.closed) return;
    // In grant order, dropped channels keeping their mark.
    const dropped = new Set(this.positions.keys());
    this.positions.clear();
    for (const channel of this.grant.channels) {
      const tag = channelTag(channel);
      const position = from.get(tag);
      if (position !== undefined) this.positions.set(tag, encodeURIComponent(position));
      else if (dropped.has(tag)) this.positions.set(tag, encodeURIComponent(this.dropped));
    }
    const prefix = (reset && resuming ? this.control('reset', { reason: 'beyond_window' }) : '') + this.ready(resuming && !reset);
    this.finishStart(
      prefix,
      [...this.followed.keys()].flatMap((tag) => replayed.get(tag) ?? []),
      through,
    );
  }

  /** A control event carrying the stream's current composite id. */
  private control(type: 'ready' | 'reset', data: unknown): string {
    return `id: ${encodePositions(this.positions)}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  private ready(resumed: boolean): string {
    return this.control('ready', { user_id: this.grant.user_id, expires: this.grant.expires, channels: this.grant.channels.length, resumed });
  }

  /**
   * `reset`/`ready`, replayed frames, then what arrived meanwhile (minus the replayed), then
   * live. A channel whose replay came with `through` drops its held-back frames up to that
   * one (they are replayed, or were before Last-Event-ID) when it is among them; when it is
   * not, it came before this stream joined, and every held-back frame is new.
   */
  private finishStart(prefix: string, replayed: Frame[], through: ReadonlyMap<string, string>): void {
    const seen = new Set<string>();
    const out: Array<string | Buffer> = [prefix];
    const add = (f: Frame): void => {
      const line = this.lineOf(f);
      if (line !== null) out.push(line, f.tail);
    };
    for (const f of replayed) {
      seen.add(`${f.tag}|${f.id}`);
      add(f);
    }
    const pending = this.pending ?? [];
    this.pending = null;
    const skipping = new Set<string>();
    if (through.size > 0) for (const f of pending) if (through.get(f.tag) === f.id) skipping.add(f.tag);
    for (const f of pending) {
      if (skipping.has(f.tag)) {
        if (through.get(f.tag) === f.id) skipping.delete(f.tag);
        continue;
      }
      if (!seen.has(`${f.tag}|${f.id}`)) add(f);
    }
    this.write(out);
  }

  /** A live event: its `id:` line and head, then the tail every stream of the event shares, gathered for the next flush. */
  deliver(frame: Frame): void {
    if (this.closed) return;
    if (this.pending !== null) {
      this.pending.push(frame);
      return;
    }
    const line = this.lineOf(frame);
    if (line === null || this.aborted) return;
    if (this.live !== null) {
      this.live.push(line, frame.tail);
      return;
    }
    this.live = [line, frame.tail];
    scheduleFlush(this, this.deps.options.flushMs ?? 0);
  }

  /** Writes the gathered live frames in one corked write (scheduleFlush). */
  flushLive(): void {
    const parts = this.live;
    this.live = null;
    if (parts === null || this.closed || this.aborted) return;
    this.res.cork(() => {
      for (const part of parts) this.writeOne(part);
    });
    this.afterWrite();
  }

  /**
   * A comment every keep-alive interval; or, where the bus moves a followed channel's position
   * without events of it (the Redis fan log: `current`), a `position` event whose id carries
   * the fresh positions, so the client's Last-Event-ID never falls behind the window while its
   * channels are quiet (EventSource keeps the id of the last event with data).
   */
  keepAlive(): void {
    if (this.pending !== null || this.live !== null) return;
    const current = this.deps.bus.current;
    let moved = false;
    if (current !== undefined) {
      for (const [tag, channel] of this.followed) {
        const position = current.call(this.deps.bus, channel);
        if (position === null) continue;
        const enc = encodeURIComponent(position);
        if (this.positions.get(tag) !== enc) {
          this.positions.set(tag, enc);
          moved = true;
        }
      }
    }
    this.write(moved ? `id: ${encodePositions(this.positions)}\nevent: position\ndata: {}\n\n` : KEEP_ALIVE);
  }

  end(): void {
    this.finish('');
  }

  /**
   * The frame's `id:` line and head, or null: nothing for another application's event or a
   * channel dropped; an event that ends the right to a channel drops it first, so its own id
   * line already carries the dropped mark, and it is the channel's last frame.
   */
  private lineOf(f: Frame): string | null {
    if (f.application_id !== this.grant.application_id || !this.followed.has(f.tag)) return null;
    const ends = this.channelEndedBy(f);
    if (ends !== null) this.drop(ends);
    if (ends !== f.tag) this.positions.set(f.tag, f.encId);
    this.deps.hub.stats.eventsWritten++;
    return `id: ${encodePositions(this.positions)}\n${f.head}`;
  }

  /** The tag of the followed conversation channel `f` takes away from this user, or null. */
  private channelEndedBy(f: Frame): string | null {
    if (f.type === 'conversation.deleted' || (f.type === 'member.removed' && f.subject === this.grant.user_id)) {
      const tag = channelTag(conversationChannel(this.grant.tenant_id, this.grant.application_id, f.conversation_id));
      return this.followed.has(tag) ? tag : null;
    }
    return null;
  }

  /** Drops the conversations of the grant the user may no longer read (see StreamDeps.readable). */
  private async checkReadable(): Promise<void> {
    if (this.deps.readable === undefined) return;
    const byId = new Map<string, string>();
    for (const [tag, channel] of this.followed) {
      const parsed = parseChannel(channel);
      if (parsed?.kind === 'conversation') byId.set(parsed.conversation_id, tag);
    }
    if (byId.size === 0) return;
    const allowed = await this.deps.readable(this.grant, [...byId.keys()]);
    for (const [id, tag] of byId) if (!allowed.has(id) && this.followed.has(tag)) this.drop(tag);
  }

  /** Stops following a channel at once: out of the hub, and marked dropped in the composite id. */
  private drop(tag: string): void {
    const channel = this.followed.get(tag)!;
    this.followed.delete(tag);
    this.joinedAt.delete(tag); // no starting position for a channel no longer followed
    this.positions.set(tag, encodeURIComponent(this.dropped));
    this.deps.hub.leaveChannel(this, channel);
  }

  private expire(): void {
    this.expiry = null;
    this.finish(`event: expired\ndata: ${JSON.stringify({ expires: this.grant.expires })}\n\n`);
  }

  /** Writes corked; the shared frame tails go out as the same Buffer to every stream. */
  write(data: string | Array<string | Buffer>): void {
    if (this.closed || this.aborted) return;
    if (this.live !== null) this.flushLive(); // frames gathered before this go out before it
    if (this.closed) return;
    this.res.cork(() => {
      if (typeof data === 'string') this.writeOne(data);
      else for (const part of data) this.writeOne(part);
    });
    this.afterWrite();
  }

  /** A slow consumer: dropped rather than let the node's memory grow; it reconnects and resumes. */
  private afterWrite(): void {
    if (this.buffered > this.deps.options.maxBufferedBytes) {
      this.deps.hub.stats.cutOff++;
      this.shutdown();
      if (!this.aborted) this.res.close();
    }
  }

  private writeOne(part: string | Buffer): void {
    if (part.length === 0) return;
    const ok = this.res.write(part);
    if (!ok || this.choked) {
      this.choked = true;
      this.buffered += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
    }
  }

  /** Writes `last`, then ends the response. */
  private finish(last: string): void {
    if (this.closed) return;
    if (last !== '') this.write(last);
    if (this.closed) return;
    this.shutdown();
    if (!this.aborted) this.res.cork(() => this.res.end());
  }

  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = null;
    if (this.expiry !== null) clearTimeout(this.expiry);
    this.expiry = null;
    this.deps.hub.leave(this, this.channels);
  }
}

function refuse(res: HttpResponse, path: string, err: ApiError): void {
  const ex: Exchange = { res, aborted: false, done: false, headers: { 'Access-Control-Allow-Origin': '*' }, status: 0, inCallback: true };
  sendError(ex, err, path, err.code === 'service_unavailable');
}

/** Seconds a client refused by a cap should wait: a user's other streams end as tabs close and credentials expire. */
const RETRY_AFTER: Record<StreamCap, string> = { user: '10', node: '1' };

/**
 * A cap refusal. The user's cap is `rate_limited` (429): a limit on what one user may hold, which
 * the client waits out (Retry-After) like any other. The node's is `service_unavailable` (503):
 * this node is full, not the user over a limit, and a load balancer retries a GET refused with
 * 503 on another node (HAProxy: `retry-on 503`).
 */
function capRefusal(cap: StreamCap, hub: Hub): ApiError {
  const headers = { 'Retry-After': RETRY_AFTER[cap] };
  return cap === 'user'
    ? new ApiError('rate_limited', `too many realtime streams: this user already holds ${hub.maxStreamsPerUser} on this node; close one, or retry in ${headers['Retry-After']} s`, headers)
    : new ApiError('service_unavailable', `this node holds as many realtime streams as it may (${hub.maxStreams}); retry in ${headers['Retry-After']} s`, headers);
}

/**
 * A request the stream refuses for its framing: invalid (400, closed), a target over
 * MAX_STREAM_TARGET_BYTES (414), or a body, which an EventSource never sends (413 past the body
 * limit, else 400; read and thrown away while the answer goes out). Null: none of these.
 */
function refuseFraming(res: HttpResponse, req: HttpRequest, path: string, bodyLimit: number): boolean {
  const ex: Exchange = { res, aborted: false, done: false, headers: { 'Access-Control-Allow-Origin': '*' }, status: 0, inCallback: true };
  const shown = shownPath(path, MAX_STREAM_TARGET_BYTES);
  const framing = readFraming(req);
  if (framing instanceof ApiError) {
    answerAndClose(ex, framing, shown);
    return true;
  }
  const tooLong = targetTooLong(path, req.getQuery() ?? '', MAX_STREAM_TARGET_BYTES);
  if (tooLong !== null) {
    sendError(ex, tooLong, shown);
    return true;
  }
  if (!hasBody(framing)) return false;
  const err = framing.length > bodyLimit ? tooLarge(bodyLimit) : new ApiError('invalid_request', 'the realtime stream takes no request body');
  answerAndLinger(ex, err, shown, new BodyReader(res, Number.POSITIVE_INFINITY, false));
  return true;
}

/** The uWS handler for GET `${API_PREFIX}/realtime/stream`. */
export function streamHandler(deps: StreamDeps): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const path = req.getUrl();
    if (refuseFraming(res, req, path, deps.options.bodyLimitBytes ?? 256 * 1024)) return;
    const query = new URLSearchParams(req.getQuery() ?? '');
    const lastEventId = req.getHeader('last-event-id') || query.get('last_event_id') || '';
    const credential = query.get('credential') ?? '';
    if (credential === '') return refuse(res, path, new ApiError('invalid_token', 'the stream needs the credential of GET .../notifications/realtime-token'));
    const verdict = deps.credentials.verify(credential);
    if (!verdict.ok) {
      const why = verdict.reason === 'expired' ? 'the stream credential has expired; get a fresh one' : 'the stream credential is not valid';
      return refuse(res, path, new ApiError('invalid_token', why));
    }
    // A request on a kept-alive connection while the node drains: the client reconnects elsewhere
    // (a load balancer retries a GET refused with 503 on another node).
    if (deps.hub.isClosed) return refuse(res, path, new ApiError('service_unavailable', 'this node is shutting down; reconnect', { 'Retry-After': '1' }));
    const cap = deps.hub.refusal(streamOwner(verdict.grant.tenant_id, verdict.grant.user_id));
    if (cap !== null) return refuse(res, path, capRefusal(cap, deps.hub));
    const resuming = lastEventId !== '';
    const known = resuming ? parseEventId(lastEventId) : new Map<string, string>();
    const stream = new Stream(res, verdict.grant, deps, known ?? new Map());
    stream.open();
    void stream.start(known, resuming).catch((err: unknown) => {
      if (stream.closed) return; // the client left, or the node is shutting down
      deps.onError?.(err);
      stream.end();
    });
  };
}
