/**
 * The edge: one uWebSockets.js handler for everything under the API prefix.
 *
 *   request ──► route match (404 / 405 / OPTIONS preflight)
 *           ──► body (415, 413 by Content-Length, then counted while read)
 *           ──► CORS decision for the Origin (if any)
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
import { Reply, type AnyRoute } from '../api/route.ts';
import type { Services } from '../api/services.ts';
import { assertValid, createAjv, Validator } from '../api/validation.ts';
import type { Config } from '../config/index.ts';
import { API_PREFIX } from '../config/index.ts';
import { ApiError } from '../errors/catalog.ts';
import { checkContext, checkPrincipal, type AccessContext } from '../identity/access.ts';
import { toApiError, type IdentityService } from '../identity/identity-service.ts';
import type { Principal } from '../identity/types.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { RateLimiter } from '../ratelimit/types.ts';
import { rateLimitHeaders } from '../ratelimit/types.ts';
import { isJsonContentType, parseJson, readBody, tooLarge } from './body.ts';
import { corsHeaders, originAllowed, pathPolicy, preflightHeaders } from './cors.ts';
import { send, sendError, sendJson, type Exchange } from './respond.ts';
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

export interface EdgeDeps {
  config: Config;
  identity: IdentityService;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  services: Services;
}

const KEPT_HEADERS = ['idempotency-key', 'last-event-id', 'access-control-request-method'];

export class Edge {
  private readonly router: Router;
  private readonly compiled = new Map<AnyRoute, CompiledRoute>();
  /** Requests in progress, for graceful shutdown. */
  inflight = 0;

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

  /** The uWS handler for `${API_PREFIX}/*`. */
  readonly handle = (res: HttpResponse, req: HttpRequest): void => {
    const started = performance.now();
    const url = req.getUrl();
    const incoming: Incoming = {
      method: req.getMethod().toUpperCase(),
      path: url,
      query: req.getQuery() ?? '',
      authorization: req.getHeader('authorization'),
      contentType: req.getHeader('content-type'),
      contentLength: req.getHeader('content-length'),
      origin: req.getHeader('origin'),
      requestId: requestIdFrom(req.getHeader('x-request-id')),
      kept: {},
    };
    for (const h of KEPT_HEADERS) {
      const v = req.getHeader(h);
      if (v !== '') incoming.kept[h] = v;
    }
    const ex: Exchange = { res, aborted: false, done: false, headers: { 'X-Request-Id': incoming.requestId }, status: 0 };
    res.onAborted(() => {
      ex.aborted = true;
    });
    this.inflight++;
    let template = 'unmatched';
    const finish = (): void => {
      this.inflight--;
      this.deps.metrics.observeRequest(template, incoming.method, ex.status, (performance.now() - started) / 1000);
    };
    const rel = url.slice(API_PREFIX.length) || '/';
    if (incoming.method === 'OPTIONS') {
      const routes = this.router.at(rel);
      if (routes.length > 0) template = (routes[0] as AnyRoute).path;
      void this.preflight(ex, incoming, rel, routes).finally(finish);
      return;
    }
    const match = this.router.match(incoming.method, rel);
    if (match.kind === 'not_found') {
      sendError(ex, new ApiError('not_found', `no route for ${incoming.method} ${url}`), url);
      finish();
      return;
    }
    if (match.kind === 'method_not_allowed') {
      template = (match.routes[0] as AnyRoute).path;
      const allow = [...match.allowed, 'OPTIONS'].join(', ');
      sendError(ex, new ApiError('method_not_allowed', `${incoming.method} is not allowed here; allowed: ${allow}`, { Allow: allow }), url);
      finish();
      return;
    }
    template = match.route.path;
    const c = this.compiled.get(match.route) as CompiledRoute;
    void this.run(ex, incoming, c, match.params).finally(finish);
  };

  private async run(ex: Exchange, inc: Incoming, c: CompiledRoute, params: Record<string, string>): Promise<void> {
    const { route } = c;
    const { identity, config } = this.deps;
    let bodyPromise: Promise<Buffer> | null = null;
    try {
      if (c.body) {
        if (!isJsonContentType(inc.contentType)) {
          // The body is not read; close the connection so its bytes do not poison the next request.
          throw new ApiError('unsupported_media_type', 'send the request body as Content-Type: application/json');
        }
        if (inc.contentLength !== '' && Number(inc.contentLength) > config.bodyLimitBytes) throw tooLarge(config.bodyLimitBytes);
        bodyPromise = readBody(ex.res, config.bodyLimitBytes);
        // Surface an over-limit body at once, even while authentication is still pending.
        bodyPromise.catch(() => undefined);
      }
      if (inc.origin !== '' && route.cors !== 'none') {
        if (await originAllowed(identity, route.cors, params, inc.origin)) Object.assign(ex.headers, corsHeaders(route.cors, inc.origin));
      }
      const principal = route.audience.includes('public') ? null : await this.authenticate(inc.authorization);
      if (principal) checkPrincipal(route, principal, params.tenant_id, params.application_id);
      if (principal?.type === 'machine') await this.limit(ex, `client:${principal.client_id}`, 'client');

      const raw = bodyPromise ? await bodyPromise : null;
      const body = raw ? parseJson(raw) : undefined;
      const query = c.query ? Object.fromEntries(new URLSearchParams(inc.query)) : {};
      assertValid([
        ...(c.path ? c.path.problems(params) : []),
        ...(c.query ? c.query.problems(query) : []),
        ...(c.body ? c.body.problems(body) : []),
      ]);

      const access = principal ? await this.access(route, principal, params) : null;
      if (route.rateLimit && principal?.type === 'user') await this.limit(ex, `${route.rateLimit}:${principal.user_id}`, route.rateLimit);

      const result = await route.handler({
        params: params as never,
        query: query as never,
        body: body as never,
        principal,
        access,
        requestId: ex.headers['X-Request-Id'] as string,
        log: this.deps.log,
        headers: inc.kept,
        services: this.deps.services,
      });
      if (result instanceof Reply) sendJson(ex, result.status, result.body, result.headers);
      else sendJson(ex, route.status, result);
    } catch (err) {
      this.fail(ex, inc, err, bodyPromise !== null);
    }
  }

  private async authenticate(authorization: string): Promise<Principal> {
    const m = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(authorization);
    if (!m) {
      throw new ApiError('invalid_token', authorization === '' ? 'missing bearer token' : 'the Authorization header must be "Bearer <token>"');
    }
    const token = m[1] as string;
    return this.deps.identity.verifier.cached(token) ?? (await this.deps.identity.verifier.verify(token));
  }

  private async access(route: AnyRoute, p: Principal, params: Record<string, string>): Promise<AccessContext> {
    if (route.context === 'account' || route.context === 'none') {
      return { principal: p, tenant: null, application: null, member: null, roles: [], capabilities: [] };
    }
    const q = {
      tenant_id: params.tenant_id as string,
      ...(route.context === 'application' ? { application_id: params.application_id as string } : {}),
      ...(p.type === 'user' ? { user_id: p.user_id } : {}),
    };
    const answer = this.deps.identity.peekContext(q) ?? (await this.deps.identity.context(q));
    return checkContext(route, p, answer, params.application_id);
  }

  private async limit(ex: Exchange, key: string, policy: 'client' | 'send' | 'lookup'): Promise<void> {
    const rule = this.deps.config.rates[policy];
    const d = await this.deps.rateLimiter.consume(key, rule);
    const headers = rateLimitHeaders(policy, rule, d);
    if (!d.allowed) {
      this.deps.metrics.rateLimited.inc({ policy });
      throw new ApiError('rate_limited', `rate limit exceeded: ${rule.limit} requests per ${rule.windowSeconds} s; retry in ${d.retryAfterSeconds} s`, headers);
    }
    Object.assign(ex.headers, headers);
  }

  private fail(ex: Exchange, inc: Incoming, thrown: unknown, bodyUnread: boolean): void {
    const err = toApiError(thrown);
    if (err instanceof ApiError) {
      // 413 and 415 leave body bytes unread on the socket: close instead of reusing it.
      const close = bodyUnread && (err.code === 'payload_too_large' || err.code === 'unsupported_media_type');
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

function requestIdFrom(header: string): string {
  return header !== '' && header.length <= 128 && /^[\w.:-]+$/.test(header) ? header : crypto.randomUUID();
}
