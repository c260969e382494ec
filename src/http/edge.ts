/**
 * The edge: one uWebSockets.js handler for everything under the API prefix.
 *
 *   request ──► route match (404 / 405 / OPTIONS preflight)
 *           ──► body reading starts ──► CORS decision for the Origin (if any)
 *           ──► body refusals (415, 413 by Content-Length; 413 later if a chunked body runs over)
 *           ──► token (401) ──► audience/scope/binding (403) ──► client rate limit (429)
 *           ──► JSON (400 invalid_json) ──► schema validation (400 invalid_request)
 *           ──► context check with the IdP (403/404/503) ──► per-user rate limit (429)
 *           ──► handler ──► response (cork) ──► metrics
 *
 * uWS rules kept here: headers, URL and method are read before any await; body chunks are
 * copied; every write after an await is corked; nothing is written after the client aborted.
 */
import crypto from 'node:crypto';
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { RawJson, Reply, type AnyRoute } from '../api/route.ts';
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
import { isJsonContentType, parseJson, readBody, tooLarge } from './body.ts';
import { corsHeaders, originAllowed, pathPolicy, preflightHeaders } from './cors.ts';
import { applyLimit, authenticate, parseQuery, resolveAccess, then } from './guards.ts';
import { appliesTo, begin, finish, keyFor, type Replay } from './idempotency.ts';
import { send, sendError, type Exchange } from './respond.ts';
import type { IdempotencyKey } from '../store/index.ts';
import { Router } from './router.ts';

interface CompiledRoute {
  route: AnyRoute;
  path: Validator | null;
  query: Validator | null;
  body: Validator | null;
}

/** Request data read synchronously in the uWS callback. */
interface Incoming {
  method: string;
  path: string;
  query: string;
  authorization: string;
  contentType: string;
  contentLength: string;
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
  bodyPromise: Promise<Buffer> | null;
  /** A body refused before reading (415, or 413 by Content-Length), thrown once CORS is decided. */
  bodyError: ApiError | null;
  principal: Principal | null;
  raw: Buffer | null;
  parsed: unknown;
  query: Record<string, string>;
  access: AccessContext | null;
  result: unknown;
  /** Set when the request carries an Idempotency-Key and claimed it (idempotency.ts). */
  idem: IdempotencyKey | null;
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
}

const PREFLIGHT_HEADERS = ['access-control-request-method'];
/** uWS reports methods in lower case; constant upper-case strings avoid an allocation per request. */
const METHODS: Record<string, string> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE', options: 'OPTIONS', head: 'HEAD' };
const NO_HEADERS: string[] = [];

export class Edge {
  private readonly router: Router;
  private readonly compiled = new Map<AnyRoute, CompiledRoute>();
  /** Requests in progress, for graceful shutdown. */
  inflight = 0;
  /** Set by the node's shutdown: every new request is refused with a retryable 503. */
  draining = false;

  constructor(routes: readonly AnyRoute[], private readonly deps: EdgeDeps) {
    this.router = new Router(routes);
    const ajv = createAjv();
    for (const r of routes) {
      this.compiled.set(r, {
        route: r,
        path: r.schemas.params ? new Validator(ajv, r.schemas.params, 'path') : null,
        query: r.schemas.query ? new Validator(ajv, r.schemas.query, 'query') : null,
        body: r.schemas.body ? new Validator(ajv, r.schemas.body, 'body') : null,
      });
    }
  }

  /** The uWS handler for `${API_PREFIX}/*`. Headers are read here, synchronously, and only those needed. */
  readonly handle = (res: HttpResponse, req: HttpRequest): void => {
    const started = performance.now();
    const url = req.getUrl();
    const lower = req.getMethod();
    const method = METHODS[lower] ?? lower.toUpperCase();
    const rel = url.slice(API_PREFIX.length) || '/';
    const match = method === 'OPTIONS' ? null : this.router.match(method, rel);
    const route = match?.kind === 'found' ? match.route : null;
    const incoming: Incoming = {
      method,
      path: url,
      query: req.getQuery() ?? '',
      authorization: route && !route.audience.includes('public') ? req.getHeader('authorization') : '',
      contentType: route?.schemas.body ? req.getHeader('content-type') : '',
      contentLength: route?.schemas.body ? req.getHeader('content-length') : '',
      origin: req.getHeader('origin'),
      requestId: requestIdFrom(req.getHeader('x-request-id')),
      kept: {},
    };
    if (route !== null && method !== 'GET') {
      const key = req.getHeader('idempotency-key');
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
      this.await(ex, routes.length > 0 ? (routes[0] as AnyRoute).path : 'unmatched', method, started, this.preflight(ex, incoming, rel, routes));
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
    const st: Step = { ex, inc, c, params, bodyPromise: null, bodyError: null, principal: null, raw: null, parsed: undefined, query: {}, access: null, result: undefined, idem: null, replay: null };
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
    const key = st.idem;
    if (key === null) return this.fail(st.ex, st.inc, thrown, st.c.body !== null);
    st.idem = null;
    const err = toApiError(thrown);
    const status = err instanceof ApiError ? err.status : 500;
    const body = err instanceof ApiError ? JSON.stringify(errorBody(err, st.inc.path)) : null;
    return finish(this.deps.services.store, key, status, body).then(
      () => this.fail(st.ex, st.inc, thrown, st.c.body !== null),
      () => this.fail(st.ex, st.inc, thrown, st.c.body !== null),
    );
  }

  private step(i: number, st: Step): void | Promise<unknown> {
    const { route } = st.c;
    switch (i) {
      case 0: // the body: start reading now (uWS wants onData inside the callback); refusals wait for CORS
        if (st.c.body) {
          const { config } = this.deps;
          if (!isJsonContentType(st.inc.contentType)) {
            st.bodyError = new ApiError('unsupported_media_type', 'send the request body as Content-Type: application/json');
          } else if (st.inc.contentLength !== '' && Number(st.inc.contentLength) > config.bodyLimitBytes) {
            st.bodyError = tooLarge(config.bodyLimitBytes);
          } else {
            st.bodyPromise = readBody(st.ex.res, config.bodyLimitBytes);
            // Keep an over-limit body from surfacing as an unhandled rejection while auth is pending.
            st.bodyPromise.catch(() => undefined);
          }
        }
        return;
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
        if (st.bodyPromise) return st.bodyPromise.then((b) => void (st.raw = b));
        return;
      case 6: {
        const { c } = st;
        st.parsed = st.raw ? parseJson(st.raw) : undefined;
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
        return begin(this.deps.services.store, key, st.raw).then((replay) => {
          if (replay) st.replay = replay;
          else st.idem = key;
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

  private fail(ex: Exchange, inc: Incoming, thrown: unknown, hasBody: boolean): void {
    const err = toApiError(thrown);
    if (err instanceof ApiError) {
      // 413 and 415 leave body bytes unread on the socket: close instead of reusing it.
      const close = hasBody && (err.code === 'payload_too_large' || err.code === 'unsupported_media_type');
      sendError(ex, err, inc.path, close);
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
