/**
 * The edge: one uWebSockets.js handler for everything under the API prefix.
 *
 *   request ──► framing (400 conflicting Content-Length, 414 request target; framing.ts)
 *           ──► route match (404 / 405 / OPTIONS preflight)
 *           ──► body reading starts ──► CORS decision for the Origin (if any)
 *           ──► body refusals (415, 413 by Content-Length; 413 later if a chunked body runs over)
 *           ──► token (401) ──► audience/scope/binding (403) ──► client rate limit (429)
 *           ──► JSON (400 invalid_json) ──► schema validation (400 invalid_request)
 *           ──► context check with the IdP (403/404/503) ──► per-user rate limit (429)
 *           ──► handler ──► response (cork) ──► metrics
 *
 * A body the edge refuses (413, 415) is read and thrown away while the answer goes out, so a
 * client still uploading reads it (linger.ts). A route without a body schema still fails a body
 * over the limit (413), as the contract says of every request.
 *
 * uWS rules kept here: headers, URL and method are read before any await; body chunks are
 * copied; every write after an await is corked; nothing is written after the client aborted.
 */
import crypto from 'node:crypto';
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { RawJson, Reply, bodyOptional, type AnyRoute } from '../api/route.ts';
import type { Services } from '../api/services.ts';
import { assertValid, createAjv, Validator } from '../api/validation.ts';
import type { Config } from '../config/index.ts';
import { API_PREFIX } from '../config/index.ts';
import { ApiError, errorBody } from '../errors/catalog.ts';
import { checkPrincipal, type AccessContext } from '../identity/access.ts';
import { toApiError, type IdentityService } from '../identity/identity-service.ts';
import type { Principal } from '../identity/types.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { RateLimiter } from '../ratelimit/types.ts';
import { BodyReader, isJsonContentType, parseJson, tooLarge } from './body.ts';
import { corsHeaders, originAllowed, pathPolicy, preflightHeaders } from './cors.ts';
import { MAX_API_TARGET_BYTES, readFraming, shownPath, targetTooLong, type Framing } from './framing.ts';
import { applyLimit, authenticate, parseQuery, resolveAccess, then } from './guards.ts';
import { appliesTo, begin, finish, idempotentId, keyFor, SOLE_PROCESS, type Claim, type Replay } from './idempotency.ts';
import { answerAndClose, answerAndLinger } from './linger.ts';
import { send, sendError, type Exchange } from './respond.ts';
import { Router } from './router.ts';

interface CompiledRoute {
  route: AnyRoute;
  path: Validator | null;
  query: Validator | null;
  body: Validator | null;
  /** Every body field is optional: no body at all (no Content-Type either) stands for `{}`. */
  bodyOptional: boolean;
}

/** Request data read synchronously in the uWS callback. */
interface Incoming {
  method: string;
  path: string;
  query: string;
  authorization: string;
  contentType: string;
  framing: Framing;
  origin: string;
  requestId: string;
  kept: Record<string, string>;
}

/** The state one request carries through the steps of `Edge.run`. */
interface Step {
  ex: Exchange;
  inc: Incoming;
  c: CompiledRoute;
  params: Record<string, string>;
  /** Reads the body from the callback on: kept for a route that takes one, counted otherwise. */
  body: BodyReader | null;
  /** A body refused before reading (415, or 413 by Content-Length), thrown once CORS is decided. */
  bodyError: ApiError | null;
  principal: Principal | null;
  raw: Buffer | null;
  parsed: unknown;
  query: Record<string, string>;
  access: AccessContext | null;
  result: unknown;
  /** Set when the request carries an Idempotency-Key and claimed it (idempotency.ts). */
  idem: Claim | null;
  /** A recorded response to send again instead of running the operation. */
  replay: Replay | null;
}

const STEP_COUNT = 12;
const REPLAYED = { 'Idempotent-Replayed': 'true' };

export interface EdgeDeps {
  config: Config;
  identity: IdentityService;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  services: Services;
  /**
   * Where the routes are mounted: the API's `/api/v1` (the default), or `''` for the web app's
   * sign-in routes at the origin's root (`/auth/...`), which are no operations of the API.
   */
  prefix?: string;
}

const PREFLIGHT_HEADERS = ['access-control-request-method'];
/**
 * Header names as bytes: uWS.js takes a typed array as is, while a string key is converted to
 * UTF-8 into a fresh allocation at every call (a measurable share of a cached request).
 */
const AUTHORIZATION = Buffer.from('authorization');
const CONTENT_TYPE = Buffer.from('content-type');
const ORIGIN = Buffer.from('origin');
const X_REQUEST_ID = Buffer.from('x-request-id');
const IDEMPOTENCY_KEY = Buffer.from('idempotency-key');
/** uWS reports methods in lower case; constant upper-case strings avoid an allocation per request. */
const METHODS: Record<string, string> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE', options: 'OPTIONS', head: 'HEAD' };
const NO_HEADERS: string[] = [];
const unsupportedMediaType = (): ApiError => new ApiError('unsupported_media_type', 'send the request body as Content-Type: application/json');

export class Edge {
  private readonly router: Router;
  private readonly compiled = new Map<AnyRoute, CompiledRoute>();
  /** Requests in progress, for graceful shutdown. */
  inflight = 0;
  /** Set by the node's shutdown: every new request is refused with a retryable 503. */
  draining = false;

  constructor(routes: readonly AnyRoute[], private readonly deps: EdgeDeps) {
    this.router = new Router(routes);
    this.prefixLength = (deps.prefix ?? API_PREFIX).length;
    const ajv = createAjv();
    for (const r of routes) {
      this.compiled.set(r, {
        route: r,
        path: r.schemas.params ? new Validator(ajv, r.schemas.params, 'path') : null,
        query: r.schemas.query ? new Validator(ajv, r.schemas.query, 'query') : null,
        body: r.schemas.body ? new Validator(ajv, r.schemas.body, 'body') : null,
        bodyOptional: bodyOptional(r.schemas.body),
      });
    }
  }

  private readonly prefixLength: number;

  /** The uWS handler for `${prefix}/*`. Headers are read here, synchronously, and only those needed. */
  readonly handle = (res: HttpResponse, req: HttpRequest): void => {
    const started = performance.now();
    const url = req.getUrl();
    const query = req.getQuery() ?? '';
    const lower = req.getMethod();
    const method = METHODS[lower] ?? lower.toUpperCase();
    const framing = readFraming(req);
    if (framing instanceof ApiError) return this.refuseEarly(res, req, framing, true, url, method, started);
    const tooLong = targetTooLong(url, query, MAX_API_TARGET_BYTES);
    if (tooLong !== null) return this.refuseEarly(res, req, tooLong, false, url, method, started);
    const rel = url.slice(this.prefixLength) || '/';
    const match = method === 'OPTIONS' ? null : this.router.match(method, rel);
    const route = match?.kind === 'found' ? match.route : null;
    const incoming: Incoming = {
      method,
      path: url,
      query,
      authorization: route && !route.audience.includes('public') ? req.getHeader(AUTHORIZATION) : '',
      contentType: route?.schemas.body ? req.getHeader(CONTENT_TYPE) : '',
      framing,
      origin: req.getHeader(ORIGIN),
      requestId: requestIdFrom(req.getHeader(X_REQUEST_ID)),
      kept: {},
    };
    if (route !== null && method !== 'GET') {
      const key = req.getHeader(IDEMPOTENCY_KEY);
      if (key !== '') incoming.kept['idempotency-key'] = key;
    }
    for (const h of method === 'OPTIONS' ? PREFLIGHT_HEADERS : (route?.headers ?? NO_HEADERS)) {
      const v = req.getHeader(h);
      if (v !== '') incoming.kept[h] = v;
    }
    const ex: Exchange = { res, aborted: false, done: false, headers: { 'X-Request-Id': incoming.requestId }, status: 0, inCallback: true };
    this.inflight++;
    if (this.draining) {
      // Shutting down: a request on a kept-alive connection is refused as retryable, and the
      // connection closed, so the client (or the load balancer) retries on another node.
      sendError(ex, new ApiError('service_unavailable', 'this node is shutting down; retry the request', { 'Retry-After': '1' }), url, true);
      this.finish(ex, match?.kind === 'found' ? match.route.path : 'unmatched', method, started);
      return;
    }
    if (match === null) {
      const routes = this.router.at(rel);
      const template = routes.length > 0 ? (routes[0] as AnyRoute).path : 'unmatched';
      if (framing.length > this.deps.config.bodyLimitBytes) {
        // A preflight answers 204: one with a body over the limit must fail like any request.
        answerAndLinger(ex, tooLarge(this.deps.config.bodyLimitBytes), url, new BodyReader(res, Number.POSITIVE_INFINITY, false));
        this.finish(ex, template, method, started);
        return;
      }
      this.await(ex, template, method, started, this.preflight(ex, incoming, rel, routes));
      return;
    }
    if (match.kind === 'not_found') {
      sendError(ex, new ApiError('not_found', `no route for ${method} ${url}`), url);
      this.finish(ex, 'unmatched', method, started);
      return;
    }
    if (match.kind === 'method_not_allowed') {
      const allow = [...match.allowed, 'OPTIONS'].join(', ');
      sendError(ex, new ApiError('method_not_allowed', `${method} is not allowed here; allowed: ${allow}`, { Allow: allow }), url);
      this.finish(ex, (match.routes[0] as AnyRoute).path, method, started);
      return;
    }
    const pending = this.run(ex, incoming, this.compiled.get(match.route) as CompiledRoute, match.params);
    if (pending) this.await(ex, match.route.path, method, started, pending);
    else this.finish(ex, match.route.path, method, started);
  };

  /**
   * Before routing: the request's framing cannot be trusted (`framing`: answer and close, parsing
   * nothing after it), or its target is not worth routing (nor echoing whole in the error body).
   */
  private refuseEarly(res: HttpResponse, req: HttpRequest, err: ApiError, framing: boolean, url: string, method: string, started: number): void {
    const ex: Exchange = { res, aborted: false, done: false, headers: { 'X-Request-Id': requestIdFrom(req.getHeader(X_REQUEST_ID)) }, status: 0, inCallback: true };
    this.inflight++;
    if (framing) answerAndClose(ex, err, shownPath(url, MAX_API_TARGET_BYTES));
    else sendError(ex, err, shownPath(url, MAX_API_TARGET_BYTES));
    this.finish(ex, 'unmatched', method, started);
  }

  /**
   * The request waits (body, IdP, async handler): uWS needs an abort handler attached before the
   * callback returns, and later writes must be corked. Requests answered at once skip all this.
   */
  private await(ex: Exchange, template: string, method: string, started: number, pending: Promise<void>): void {
    ex.inCallback = false;
    if (!ex.done) ex.res.onAborted(() => (ex.aborted = true));
    void pending.finally(() => this.finish(ex, template, method, started));
  }

  private finish(ex: Exchange, template: string, method: string, started: number): void {
    this.inflight--;
    this.deps.metrics.observeRequest(template, method, ex.status, (performance.now() - started) / 1000);
  }

  /**
   * Runs the steps of one request in order. Each step answers synchronously when it can (token
   * and context cached, in-process rate limiter, synchronous handler) and with a promise
   * otherwise; the loop only leaves the uWS callback at the first step that must wait, so a fully
   * cached request is answered inside the callback with no promise, closure or microtask hop.
   */
  private run(ex: Exchange, inc: Incoming, c: CompiledRoute, params: Record<string, string>): void | Promise<void> {
    const st: Step = { ex, inc, c, params, body: null, bodyError: null, principal: null, raw: null, parsed: undefined, query: {}, access: null, result: undefined, idem: null, replay: null };
    return this.advance(st, 0);
  }

  private advance(st: Step, from: number): void | Promise<void> {
    try {
      for (let i = from; i < STEP_COUNT; i++) {
        const pending = this.step(i, st);
        if (pending instanceof Promise) {
          return pending.then(
            () => this.advance(st, i + 1),
            (err: unknown) => this.failStep(st, err),
          );
        }
      }
    } catch (err) {
      return this.failStep(st, err);
    }
  }

  /** A failed step; under a claimed Idempotency-Key the refusal is recorded (or the key released) first. */
  private failStep(st: Step, thrown: unknown): void | Promise<void> {
    const claim = st.idem;
    if (claim === null) return this.fail(st.ex, st.inc, thrown, st.body);
    st.idem = null;
    const err = toApiError(thrown);
    const status = err instanceof ApiError ? err.status : 500;
    const body = err instanceof ApiError ? JSON.stringify(errorBody(err, st.inc.path)) : null;
    return finish(this.deps.services.store, claim, status, body).then(
      () => this.fail(st.ex, st.inc, thrown, st.body),
      () => this.fail(st.ex, st.inc, thrown, st.body),
    );
  }

  private step(i: number, st: Step): void | Promise<unknown> {
    const { route } = st.c;
    switch (i) {
      case 0: {
        // The body: start reading now (uWS wants onData inside the callback); refusals wait for
        // CORS. A refused body is still read (counted, not kept), for the lingering answer.
        const limit = this.deps.config.bodyLimitBytes;
        const { framing } = st.inc;
        const res = st.ex.res;
        if (st.c.body) {
          // Without a Content-Type a route whose fields are all optional reads on: an empty
          // body is `{}` (step 6), anything else is still 415 then.
          if (!isJsonContentType(st.inc.contentType) && !(st.c.bodyOptional && st.inc.contentType === '')) st.bodyError = unsupportedMediaType();
          else if (framing.length > limit) st.bodyError = tooLarge(limit);
          st.body = new BodyReader(res, st.bodyError ? Number.POSITIVE_INFINITY : limit, st.bodyError === null);
        } else if (framing.length > limit) {
          st.bodyError = tooLarge(limit);
          st.body = new BodyReader(res, Number.POSITIVE_INFINITY, false);
        } else if (framing.chunked) {
          // A body of unknown length on a route that takes none: counted to its end (413 past
          // the limit) before the answer, which could not take a 413 back once sent.
          st.body = new BodyReader(res, limit, false);
        }
        return;
      }
      case 1: // CORS before any refusal, so a browser can read every error below
        return this.cors(st.ex, st.inc, route, st.params);
      case 2:
        // A body that was not read leaves bytes on the socket: the error closes the connection.
        if (st.bodyError) throw st.bodyError;
        return;
      case 3: {
        if (route.audience.includes('public')) return;
        const p = authenticate(this.deps.identity, st.inc.authorization);
        if (p instanceof Promise) return p.then((v) => void (st.principal = v));
        st.principal = p;
        return;
      }
      case 4: // audience, scope, binding; then the per-client limit of machines
        if (st.principal === null) return;
        checkPrincipal(route, st.principal, st.params.tenant_id, st.params.application_id);
        if (st.principal.type === 'machine') return applyLimit(this.deps, st.ex, `client:${st.principal.client_id}`, 'client');
        return;
      case 5:
        if (st.body === null) return;
        if (st.c.body === null) return st.body.promise.then(() => undefined);
        return st.body.promise.then((b) => void (st.raw = b));
      case 6: {
        const { c } = st;
        if (st.raw && st.raw.length > 0 && st.inc.contentType === '') throw unsupportedMediaType();
        st.parsed = st.raw ? parseJson(st.raw) : undefined;
        if (st.parsed === undefined && c.bodyOptional) st.parsed = {};
        st.query = c.query ? parseQuery(st.inc.query) : {};
        assertValid([
          ...(c.path ? c.path.problems(st.params) : []),
          ...(c.query ? c.query.problems(st.query) : []),
          ...(c.body ? c.body.problems(st.parsed) : []),
        ]);
        return;
      }
      case 7: {
        if (st.principal === null) return;
        const a = resolveAccess(this.deps.identity, route, st.principal, st.params);
        if (a instanceof Promise) return a.then((v) => void (st.access = v));
        st.access = a;
        return;
      }
      case 8: {
        // Idempotency-Key: claim it, or answer a retry with the recorded response.
        const header = st.inc.kept['idempotency-key'];
        if (!appliesTo(st.inc.method, st.principal, header)) return;
        const key = keyFor(st.principal as Principal, st.inc.method, st.inc.path, header);
        const { services } = this.deps;
        return begin(services.store, services.claimOwner?.() ?? SOLE_PROCESS, key, st.raw).then((r) => {
          if ('key' in r) st.idem = r;
          else st.replay = r;
        });
      }
      case 9:
        if (st.replay) return;
        if (route.rateLimit && st.principal) {
          // Per user: the caller, or for a machine the member it acts for (body.actor_user_id).
          const actor = (st.parsed as { actor_user_id?: unknown } | undefined)?.actor_user_id;
          const person = st.principal.type === 'user' ? st.principal.user_id : typeof actor === 'string' ? actor : null;
          if (person !== null) return applyLimit(this.deps, st.ex, `${route.rateLimit}:${person}`, route.rateLimit);
        }
        return;
      case 10: {
        if (st.replay) return;
        const r = route.handler({
          params: st.params as never,
          query: st.query as never,
          body: st.parsed as never,
          principal: st.principal,
          access: st.access,
          requestId: st.ex.headers['X-Request-Id'] as string,
          log: this.deps.log,
          headers: st.inc.kept,
          services: this.deps.services,
          idempotentId: st.idem ? idempotentId.bind(null, st.idem) : null,
        });
        if (r instanceof Promise) return r.then((v) => void (st.result = v));
        st.result = r;
        return;
      }
      case 11: {
        if (st.replay) {
          send(st.ex, st.replay.status, st.replay.body, REPLAYED);
          return;
        }
        const reply = st.result instanceof Reply ? st.result : null;
        const status = reply ? reply.status : route.status;
        const body = status === 204 ? null : st.result instanceof RawJson ? st.result.bytes : JSON.stringify(reply ? reply.body : st.result);
        if (st.idem) return finish(this.deps.services.store, st.idem, status, Buffer.isBuffer(body) ? body.toString('utf8') : body).then(() => send(st.ex, status, body, reply?.headers));
        send(st.ex, status, body, reply?.headers);
        return;
      }
    }
  }

  /** Adds CORS headers when the request's Origin is registered for this route's context. */
  private cors(ex: Exchange, inc: Incoming, route: AnyRoute, params: Record<string, string>): void | Promise<void> {
    if (route.cors === 'application' || route.cors === 'tenant') ex.headers.Vary = 'Origin'; // answers differ by Origin: caches must know
    if (inc.origin === '' || route.cors === 'none') return;
    return then(originAllowed(this.deps.identity, route.cors, params, inc.origin), (ok) => {
      if (ok) Object.assign(ex.headers, corsHeaders(route.cors, inc.origin));
    });
  }

  private fail(ex: Exchange, inc: Incoming, thrown: unknown, body: BodyReader | null): void {
    const err = toApiError(thrown);
    if (err instanceof ApiError) {
      // A refused body of unbounded size (413, or 415 of a body over the limit or chunked) is
      // read and thrown away while the answer goes out, then the connection closes (linger.ts).
      // A 415 of a declared body within the limit needs no close: uWS skips its bytes.
      const unbounded = inc.framing.chunked || inc.framing.length > this.deps.config.bodyLimitBytes;
      if (err.code === 'payload_too_large' || (err.code === 'unsupported_media_type' && unbounded)) {
        answerAndLinger(ex, err, inc.path, body);
        return;
      }
      sendError(ex, err, inc.path);
      return;
    }
    this.deps.log.error({ err, req_id: ex.headers['X-Request-Id'], method: inc.method, path: inc.path }, 'unhandled error');
    sendError(ex, new ApiError('server_error', `internal error; quote request id ${ex.headers['X-Request-Id']}`), inc.path);
  }

  private async preflight(ex: Exchange, inc: Incoming, rel: string, routes: AnyRoute[]): Promise<void> {
    if (routes.length === 0) {
      sendError(ex, new ApiError('not_found', `no route for ${inc.path}`), inc.path);
      return;
    }
    const requested = inc.kept['access-control-request-method'] ?? '';
    const policy = pathPolicy(routes, requested.toUpperCase());
    const match = this.router.match(requested.toUpperCase(), rel);
    const params = match.kind === 'found' ? match.params : {};
    if (inc.origin !== '' && policy !== 'none' && (await originAllowed(this.deps.identity, policy, params, inc.origin))) {
      send(ex, 204, null, preflightHeaders(policy, inc.origin));
    } else {
      send(ex, 204, null);
    }
  }
}

/** Request ids: a sane incoming X-Request-Id, else this process's boot id and a counter (cheap, unique). */
const BOOT_ID = crypto.randomBytes(6).toString('base64url');
let requestCounter = 0;
function requestIdFrom(header: string): string {
  return header !== '' && header.length <= 128 && /^[\w.:-]+$/.test(header) ? header : `${BOOT_ID}-${(++requestCounter).toString(36)}`;
}
