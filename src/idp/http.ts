/**
 * The IdP over HTTP: `createIdpHandler` turns the route table into a framework-agnostic handler
 * (request in, response out, never throws), and `mountIdp` serves that handler from a
 * uWebSockets.js app under a path prefix (`/idp` inside the chat node, `` for the standalone IdP).
 *
 * Every answer is JSON; errors use OAuth's `{error, error_description}` body. Unknown paths get
 * 404, a known path with another method 405 with `Allow`. Browser apps registered on an
 * application client may call the OAuth endpoints cross-origin (they sign users in and exchange
 * tokens from the browser); the directory is for servers only and sends no CORS headers.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { DevIdp } from './dev-idp.ts';
import { pathSegment } from './http-params.ts';
import { IDP_ROUTES, type IdpRoute } from './http-routes.ts';
import { IDP_MAX_BODY_BYTES, json, type IdpHandler, type IdpHttpRequest, type IdpHttpResponse } from './http-types.ts';
import { OAuthError } from './oauth-error.ts';

export type { IdpHandler, IdpHttpRequest, IdpHttpResponse } from './http-types.ts';

export interface IdpHandlerOptions {
  /** Called with unexpected errors (answered as 500 server_error). Default: a JSON line on stderr. */
  onError?: (err: unknown, req: IdpHttpRequest) => void;
}

export function createIdpHandler(idp: DevIdp, options: IdpHandlerOptions = {}): IdpHandler {
  const onError = options.onError ?? defaultOnError;
  const origins = new Set(idp.fixture.tenants.flatMap((t) => t.applications.flatMap((a) => a.client.allowed_origins)));
  return async (req) => {
    let res: IdpHttpResponse;
    try {
      res = await dispatch(idp, req);
    } catch (err) {
      if (err instanceof OAuthError) {
        res = json(err.status, { error: err.code, error_description: err.description }, { ...err.headers });
      } else {
        onError(err, req);
        res = json(500, { error: 'server_error', error_description: 'unexpected error in the identity provider' });
      }
    }
    return withCors(res, req, origins);
  };
}

async function dispatch(idp: DevIdp, req: IdpHttpRequest): Promise<IdpHttpResponse> {
  const method = req.method.toUpperCase();
  const matches: { route: IdpRoute; params: Record<string, string> }[] = [];
  for (const route of IDP_ROUTES) {
    if (route.guard === 'dev' && !idp.devLogin) continue; // as if the route did not exist
    const params = match(route.path, req.path);
    if (params) matches.push({ route, params });
  }
  if (matches.length === 0) throw new OAuthError('not_found', `no such endpoint: ${req.path}`);
  const allow = [...new Set(matches.map((m) => m.route.method))].join(', ');
  if (method === 'OPTIONS') return { status: 204, headers: { allow }, body: '' };
  const hit = matches.find((m) => m.route.method === method);
  if (!hit) throw new OAuthError('method_not_allowed', `${method} is not allowed on ${req.path}`, { allow });
  if (req.body.length > IDP_MAX_BODY_BYTES) throw new OAuthError('payload_too_large', `request bodies are limited to ${IDP_MAX_BODY_BYTES} bytes`);
  if (hit.route.guard === 'directory') checkDirectoryKey(idp, req.headers.authorization);
  return hit.route.handle(idp, req, hit.params);
}

/** The route template a path falls under (any method), for metrics labels; null when none. */
export function idpRouteTemplate(path: string): string | null {
  for (const route of IDP_ROUTES) if (match(route.path, path)) return route.path;
  return null;
}

/** `/a/:x/b` against a path; the decoded captures, or undefined when it does not match. */
function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) {
      if (g === '') return undefined;
      params[w.slice(1)] = pathSegment(g);
    } else if (w !== g) {
      return undefined;
    }
  }
  return params;
}

function checkDirectoryKey(idp: DevIdp, authorization: string | undefined): void {
  const m = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m || !idp.isDirectoryKey(m[1] ?? '')) {
    throw new OAuthError('invalid_token', 'the directory needs Authorization: Bearer <directory API key>');
  }
}

function withCors(res: IdpHttpResponse, req: IdpHttpRequest, origins: ReadonlySet<string>): IdpHttpResponse {
  if (req.path.startsWith('/directory/')) return res;
  const origin = req.headers.origin;
  const headers: Record<string, string> = Object.assign({}, res.headers, { vary: 'Origin' });
  if (origin !== undefined && origins.has(origin)) {
    headers['access-control-allow-origin'] = origin;
    if (req.method.toUpperCase() === 'OPTIONS') {
      headers['access-control-allow-methods'] = 'GET, POST';
      headers['access-control-allow-headers'] = 'Authorization, Content-Type';
      headers['access-control-max-age'] = '600';
    }
  }
  const { headers: _old, ...rest } = res;
  return { headers, ...rest };
}

function defaultOnError(err: unknown, req: IdpHttpRequest): void {
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'idp request failed', method: req.method, path: req.path, err: detail })}\n`);
}

// --- uWebSockets.js binding ---

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  204: 'No Content',
  303: 'See Other',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
};

/**
 * Serves `handler` for every method under `prefix` (`''` or `/something`, no trailing slash).
 * uWS rules honoured here: request data is read synchronously before any await (the request
 * object dies when the callback returns), body chunks are copied (their memory is reused),
 * nothing is written after an abort, and writes after an await are corked.
 *
 * `observe`, when given, is called once per answered request with its route template (the
 * prefix plus the IdP route's pattern, or `unmatched`), method, status and duration: the chat
 * node counts its embedded IdP's requests with its own.
 */
export type IdpObserver = (route: string, method: string, status: number, seconds: number) => void;

export function mountIdp(app: TemplatedApp, prefix: string, handler: IdpHandler, observe?: IdpObserver): void {
  if (prefix !== '' && !/^\/[^?#*]*[^/?#*]$/.test(prefix)) {
    throw new Error(`IdP mount prefix must be "" or start with "/" and not end with "/" (got "${prefix}")`);
  }
  const serve = (res: HttpResponse, req: HttpRequest): void => {
    const started = performance.now();
    const method = req.getMethod().toUpperCase();
    const url = req.getUrl();
    const query = new URLSearchParams(req.getQuery() ?? '');
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
    });
    const path = url.slice(prefix.length) || '/';

    let done = false;
    res.onAborted(() => {
      done = true;
    });
    const send = (r: IdpHttpResponse, closeConnection = false): void => {
      if (done) return;
      done = true;
      if (observe) {
        const template = idpRouteTemplate(path);
        observe(template === null ? 'unmatched' : `${prefix}${template}`, method, r.status, (performance.now() - started) / 1000);
      }
      res.cork(() => {
        res.writeStatus(`${r.status} ${STATUS_TEXT[r.status] ?? ''}`.trimEnd());
        for (const [k, v] of Object.entries(r.headers)) res.writeHeader(k, v);
        res.end(r.body, closeConnection);
      });
    };
    const tooLarge = () =>
      send(json(413, { error: 'payload_too_large', error_description: `request bodies are limited to ${IDP_MAX_BODY_BYTES} bytes` }), true);

    if (Number(headers['content-length'] ?? 0) > IDP_MAX_BODY_BYTES) {
      tooLarge();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > IDP_MAX_BODY_BYTES) {
        tooLarge();
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      handler({ method, path, query, headers, body: Buffer.concat(chunks) }).then(
        (r) => send(r),
        // The handler never rejects by contract; this is the last line of defence.
        () => send(json(500, { error: 'server_error', error_description: 'unexpected error in the identity provider' })),
      );
    });
  };
  app.any(`${prefix}/*`, serve);
  if (prefix !== '') app.any(prefix, serve);
}
