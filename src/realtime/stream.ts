/**
 * The SSE endpoint: `GET {API_PREFIX}/realtime/stream?credential=...` on uWebSockets.js, outside
 * the JSON route table (the credential is the only authentication; see credential.ts).
 *
 *   verify credential (401 invalid_token, the contract's error body)
 *   ──► 200 text/event-stream ──► join the hub (live events wait while resuming)
 *   ──► Last-Event-ID given: readSince per channel ──► `reset` or replayed events, in order
 *   ──► `ready` ──► live events ... keep-alive comments ... `expired` at the credential's expiry
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
import { sendError, type Exchange } from '../http/respond.ts';
import type { RealtimeCredentials, RealtimeGrant } from './credential.ts';
import { channelTag, encodePositions, parseEventId } from './event-id.ts';
import { frameOf, type Frame, type Hub, type HubStream } from './hub.ts';

export interface StreamOptions {
  /** A stream whose unsent output passes this many bytes is closed (it reconnects and resumes). */
  maxBufferedBytes: number;
  /** Sent as the `retry:` field: the client's reconnect delay. */
  retryMs: number;
}

export interface StreamDeps {
  hub: Hub;
  bus: EventStreams<ChatEventBody>;
  credentials: RealtimeCredentials;
  options: StreamOptions;
  onError?: (err: unknown) => void;
}

const KEEP_ALIVE = ': ka\n\n';

/** One open stream. */
class Stream implements HubStream {
  /** tag → percent-encoded bus id of the last event sent per channel (the composite id). */
  private readonly positions = new Map<string, string>();
  /** Live events that arrived while resuming; null once live. */
  private pending: Frame[] | null = null;
  private choked = false;
  private buffered = 0;
  private closed = false;
  aborted = false;
  private expiry: NodeJS.Timeout | null = null;

  constructor(
    private readonly res: HttpResponse,
    readonly grant: RealtimeGrant,
    private readonly deps: StreamDeps,
  ) {}

  /** Inside the uWS callback: headers out, hub joined; answers the hub's heads per channel. */
  open(resuming: boolean): Map<string, string | null> {
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
    if (resuming) this.pending = [];
    const heads = this.deps.hub.join(this, this.grant.channels);
    this.expiry = setTimeout(() => this.expire(), Math.max(0, this.grant.expires - Date.now()));
    return heads;
  }

  /** Starts positions at the hub's heads (a fresh stream sees what happens from now on). */
  startAt(heads: Map<string, string | null>, known: Map<string, string> = new Map()): void {
    for (const channel of this.grant.channels) {
      const tag = channelTag(channel);
      const own = known.get(tag);
      const head = heads.get(channel) ?? null;
      if (own !== undefined) this.positions.set(tag, encodeURIComponent(own));
      else if (head !== null) this.positions.set(tag, encodeURIComponent(head));
    }
  }

  /** A control event carrying the stream's current composite id. */
  control(type: 'ready' | 'reset', data: unknown): string {
    return `id: ${encodePositions(this.positions)}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  ready(resumed: boolean): string {
    return this.control('ready', { user_id: this.grant.user_id, expires: this.grant.expires, channels: this.grant.channels.length, resumed });
  }

  /** After an await: replayed frames (or a reset), then what arrived meanwhile, then live. */
  finishResume(prefix: string, replayed: Frame[]): void {
    if (this.closed) return;
    const seen = new Set<string>();
    const out: Array<string | Buffer> = [prefix];
    for (const f of replayed) {
      seen.add(`${f.tag}|${f.id}`);
      this.framed(f, out);
    }
    const pending = this.pending ?? [];
    this.pending = null;
    for (const f of pending) if (!seen.has(`${f.tag}|${f.id}`)) this.framed(f, out);
    this.write(out);
  }

  deliver(frame: Frame): void {
    if (this.closed) return;
    if (this.pending !== null) {
      this.pending.push(frame);
      return;
    }
    const parts: Array<string | Buffer> = [];
    this.framed(frame, parts);
    if (parts.length > 0) this.write(parts);
  }

  keepAlive(): void {
    if (this.pending === null) this.write(KEEP_ALIVE);
  }

  end(): void {
    this.finish('');
  }

  /** Appends the frame with this stream's id line to `out`; nothing for another application's event. */
  private framed(f: Frame, out: Array<string | Buffer>): void {
    if (f.application_id !== this.grant.application_id) return;
    this.deps.hub.stats.eventsWritten++;
    this.positions.set(f.tag, f.encId);
    out.push(`id: ${encodePositions(this.positions)}\n`, f.body);
  }

  private expire(): void {
    this.expiry = null;
    this.finish(`event: expired\ndata: ${JSON.stringify({ expires: this.grant.expires })}\n\n`);
  }

  /** Writes corked; the shared frame bodies go out as the same Buffer to every stream. */
  write(data: string | Array<string | Buffer>): void {
    if (this.closed || this.aborted) return;
    this.res.cork(() => {
      if (typeof data === 'string') this.writeOne(data);
      else for (const part of data) this.writeOne(part);
    });
    if (this.buffered > this.deps.options.maxBufferedBytes) {
      // A slow consumer: drop it rather than grow the node's memory; it reconnects and resumes.
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
    this.deps.hub.leave(this, this.grant.channels);
  }
}

function refuse(res: HttpResponse, path: string, message: string, code: 'invalid_token' | 'server_error' = 'invalid_token'): void {
  const ex: Exchange = { res, aborted: false, done: false, headers: { 'Access-Control-Allow-Origin': '*' }, status: 0, inCallback: true };
  sendError(ex, new ApiError(code, message), path, code === 'server_error');
}

/** The uWS handler for GET `${API_PREFIX}/realtime/stream`. */
export function streamHandler(deps: StreamDeps): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const path = req.getUrl();
    const query = new URLSearchParams(req.getQuery() ?? '');
    const lastEventId = req.getHeader('last-event-id') || query.get('last_event_id') || '';
    const credential = query.get('credential') ?? '';
    if (credential === '') return refuse(res, path, 'the stream needs the credential of GET .../notifications/realtime-token');
    const verdict = deps.credentials.verify(credential);
    if (!verdict.ok) {
      const why = verdict.reason === 'expired' ? 'the stream credential has expired; get a fresh one' : 'the stream credential is not valid';
      return refuse(res, path, why);
    }
    // A request on a kept-alive connection while the node drains: the client reconnects elsewhere.
    if (deps.hub.isClosed) return refuse(res, path, 'this node is shutting down; reconnect', 'server_error');
    const stream = new Stream(res, verdict.grant, deps);
    const resuming = lastEventId !== '';
    const heads = stream.open(resuming);
    if (!resuming) {
      stream.startAt(heads);
      stream.write(stream.ready(false));
      return;
    }
    void resume(stream, heads, lastEventId, deps).catch((err: unknown) => {
      deps.onError?.(err);
      stream.end();
    });
  };
}

async function resume(stream: Stream, heads: Map<string, string | null>, lastEventId: string, deps: StreamDeps): Promise<void> {
  const known = parseEventId(lastEventId);
  const reset = (): void => {
    stream.startAt(heads);
    stream.finishResume(stream.control('reset', { reason: 'beyond_window' }) + stream.ready(false), []);
  };
  if (known === null) return reset();
  const replayed: Frame[] = [];
  for (const channel of stream.grant.channels) {
    const tag = channelTag(channel);
    const from = known.get(tag);
    if (from === undefined) continue; // a channel new to this stream (or silent so far): from now on
    const r = await deps.bus.readSince(channel, from);
    if (r.reset) return reset();
    for (const e of r.events) replayed.push(frameOf(tag, e));
  }
  stream.startAt(heads, known);
  stream.finishResume(stream.ready(true), replayed);
}
