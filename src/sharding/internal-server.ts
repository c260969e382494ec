/**
 * The internal listener: peers forward conversation operations here, on a port of its own that
 * is never behind the public load balancer.
 *
 *   POST /internal/v1/actors/<op> ──► secret (constant time) ──► op known ──► Content-Length bound
 *     ──► body (bounded) ──► { args } shape ──► owner by this node's view? ──► ActorHost.<op>
 *     ──► 200 { result } | status { error } (wire.ts)
 *
 * A request for a conversation this node does not own by its own view is refused with the
 * retryable not_owner answer (and this node re-reads membership: the sender evidently sees
 * another ring). Views may disagree for a moment; the store's epoch fencing, not this check,
 * is what keeps two owners from assigning the same seq.
 *
 * Arguments are checked for shape only (arity, a ref with ids): the sender is a node of the same
 * cluster holding the secret, and its edge has validated and authorized the request already.
 * uWS rules kept here: headers read before any await, writes after an await corked, nothing
 * written after an abort.
 */
import crypto from 'node:crypto';
import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { ActorUnavailableError } from '../actors/errors.ts';
import { ApiError } from '../errors/catalog.ts';
import { parseJson, readBody } from '../http/body.ts';
import { statusLine } from '../http/respond.ts';
import { arity, conversationOf, invokeLocal, isOperation, type OpArgs, type Operation } from './operations.ts';
import type { Placement } from './placement.ts';
import { silentLog, type LocalActorHost, type ShardingLog } from './types.ts';
import { ACTORS_PATH, ChannelRefusal, FROM_HEADER, ForwardUnavailableError, SECRET_HEADER, encodeError } from './wire.ts';

export interface InternalServerOptions {
  host: string;
  /** 0 picks a free port (tests); read it back from `port`. */
  port: number;
  secret: string;
  actors: LocalActorHost;
  placement: Pick<Placement, 'owner' | 'touched' | 'suspectStale' | 'selfId'>;
  /** Largest request body accepted; default 1 MiB (the public edge's limit is 256 kB). */
  maxBodyBytes?: number;
  log?: ShardingLog;
}

interface Pending {
  res: HttpResponse;
  /** Aborted by the peer, or answered: nothing more may be written. */
  finished: boolean;
  inCallback: boolean;
}

export class InternalServer {
  /** Requests being answered, for a graceful close. */
  inflight = 0;
  private readonly secretDigest: Buffer;
  private readonly maxBody: number;
  private readonly log: ShardingLog;
  private closed = false;

  private constructor(
    private readonly options: InternalServerOptions,
    private readonly socket: us_listen_socket,
    readonly port: number,
  ) {
    this.secretDigest = digest(options.secret);
    this.maxBody = options.maxBodyBytes ?? 1024 * 1024;
    this.log = options.log ?? silentLog;
  }

  static async listen(options: InternalServerOptions): Promise<InternalServer> {
    if (options.secret.length < 16) throw new RangeError('internal server: the cluster secret must hold at least 16 characters');
    const app: TemplatedApp = uWS.App();
    const socket = await new Promise<us_listen_socket>((resolve, reject) => {
      app.listen(options.host, options.port, (s) => (s ? resolve(s) : reject(new Error(`internal server: cannot listen on ${options.host}:${options.port}`))));
    });
    const server = new InternalServer(options, socket, uWS.us_socket_local_port(socket as unknown as uWS.us_socket));
    app.post(`${ACTORS_PATH}:op`, server.handle);
    app.any('/*', (res) => {
      const p: Pending = { res, finished: false, inCallback: true };
      server.fail(p, new ChannelRefusal('not_found', 'no such internal route'), true);
    });
    return server;
  }

  /**
   * Stops accepting, then waits up to `graceMs` for the requests in flight. uWS cannot close the
   * peers' kept-alive connections from here, so a request still arriving on one is refused as
   * draining (retryable) and its connection closed.
   */
  async close(graceMs = 5000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    uWS.us_listen_socket_close(this.socket);
    const deadline = Date.now() + graceMs;
    while (this.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (this.inflight > 0) this.log.warn({ inflight: this.inflight }, 'internal server closed with forwarded requests in flight');
  }

  private readonly handle = (res: HttpResponse, req: HttpRequest): void => {
    const p: Pending = { res, finished: false, inCallback: true };
    const op = req.getParameter(0) ?? '';
    const secret = req.getHeader(SECRET_HEADER);
    const from = req.getHeader(FROM_HEADER);
    const declared = Number(req.getHeader('content-length') || '0');
    // Refusals before the body is read close the connection: the unread body would otherwise be
    // taken for the next request on it.
    if (!crypto.timingSafeEqual(digest(secret), this.secretDigest)) {
      this.fail(p, new ChannelRefusal('invalid_token', 'missing or wrong cluster secret'), true);
      return;
    }
    if (this.closed) {
      this.fail(p, new ActorUnavailableError('draining', null), true);
      return;
    }
    if (!isOperation(op)) {
      this.fail(p, new ChannelRefusal('not_found', `unknown operation "${op}"`), true);
      return;
    }
    if (declared > this.maxBody) {
      this.fail(p, new ChannelRefusal('payload_too_large', `the request body exceeds ${this.maxBody} bytes`), true);
      return;
    }
    this.inflight++;
    let abort: (err: Error) => void = () => {};
    const aborted = new Promise<never>((_, reject) => (abort = reject));
    aborted.catch(() => {});
    res.onAborted(() => {
      p.finished = true;
      abort(new Error('aborted'));
    });
    p.inCallback = false;
    void this.serve(p, op, from, readBody(res, this.maxBody), aborted).finally(() => this.inflight--);
  };

  private async serve(p: Pending, op: Operation, from: string, reading: Promise<Buffer>, aborted: Promise<never>): Promise<void> {
    try {
      let body: unknown;
      try {
        body = parseJson(await Promise.race([reading, aborted]));
      } catch (err) {
        throw err instanceof ApiError ? new ChannelRefusal(err.code, err.message) : err;
      }
      await this.run(p, op, body, from);
    } catch (err) {
      this.fail(p, err, false);
    }
  }

  private async run(p: Pending, op: Operation, body: unknown, from: string): Promise<void> {
    const args = (body as { args?: unknown } | undefined)?.args;
    if (!Array.isArray(args) || args.length !== arity(op)) throw new ChannelRefusal('invalid_request', `${op} takes ${arity(op)} argument(s) in "args"`);
    const conversation_id = conversationOf(op, args);
    if (conversation_id === null) throw new ChannelRefusal('invalid_request', `${op}: the first argument must name the conversation`);
    const owner = this.options.placement.owner(conversation_id);
    if (owner.kind !== 'self') {
      void this.options.placement.suspectStale();
      throw new ForwardUnavailableError('not_owner', conversation_id, `node ${this.options.placement.selfId} does not own it (sent by ${from || 'unknown'})`);
    }
    this.options.placement.touched(conversation_id);
    const result = await invokeLocal(this.options.actors, op, args as OpArgs<typeof op>);
    this.reply(p, 200, JSON.stringify({ result: result ?? null }), false);
  }

  private fail(p: Pending, err: unknown, closeConnection: boolean): void {
    const { status, body } = encodeError(err);
    // A body that ran over the bound mid-way was not read to its end: the connection cannot be reused.
    if (err instanceof ApiError && err.code === 'payload_too_large') closeConnection = true;
    if (status >= 500 && !(err instanceof ApiError)) this.log.warn({ err: (err as Error).message }, 'internal server: forwarded operation failed');
    this.reply(p, status, JSON.stringify(body), closeConnection);
  }

  private reply(p: Pending, status: number, body: string, closeConnection: boolean): void {
    if (p.finished) return;
    p.finished = true;
    const write = (): void => {
      if (status !== 200) p.res.writeStatus(statusLine(status));
      p.res.writeHeader('Content-Type', 'application/json');
      p.res.end(body, closeConnection);
    };
    if (p.inCallback) write();
    else p.res.cork(write);
  }
}

function digest(text: string): Buffer {
  return crypto.createHash('sha256').update(text).digest();
}
