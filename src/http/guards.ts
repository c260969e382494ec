/**
 * The checks of the edge that consult identity and rate limits: each answers synchronously when
 * its answer is cached (token, context, in-process limiter) and with a promise otherwise.
 */
import { ApiError } from '../errors/catalog.ts';
import { checkContext, type AccessContext } from '../identity/access.ts';
import type { IdentityService } from '../identity/identity-service.ts';
import type { ContextQuery, Principal } from '../identity/types.ts';
import { rateLimitHeaders } from '../ratelimit/types.ts';
import type { AnyRoute } from '../api/route.ts';
import type { EdgeDeps } from './edge.ts';
import type { Exchange } from './respond.ts';

/** Continues with `f` at once for a plain value, after settlement for a promise. */
export function then<T, R>(v: T | Promise<T>, f: (value: T) => R | Promise<R>): R | Promise<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/** The token of `Bearer <token>`; its syntax is checked by the verifier (or matched in its cache). */
export function bearerToken(authorization: string): string {
  if (authorization === '') throw new ApiError('invalid_token', 'missing bearer token');
  const token = authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ' ? authorization.slice(7).trim() : '';
  if (token === '' || token.includes(' ')) throw new ApiError('invalid_token', 'the Authorization header must be "Bearer <token>"');
  return token;
}

export function authenticate(identity: IdentityService, authorization: string): Principal | Promise<Principal> {
  const token = bearerToken(authorization);
  return identity.verifier.cached(token) ?? identity.verifier.verify(token);
}

export function resolveAccess(identity: IdentityService, route: AnyRoute, p: Principal, params: Record<string, string>): AccessContext | Promise<AccessContext> {
  if (route.context === 'account' || route.context === 'none') {
    return { principal: p, tenant: null, application: null, member: null, roles: [], capabilities: [] };
  }
  const q: ContextQuery = { tenant_id: params.tenant_id as string };
  if (route.context === 'application') q.application_id = params.application_id as string;
  if (p.type === 'user') q.user_id = p.user_id;
  const hit = identity.peekContext(q);
  if (hit) return checkContext(route, p, hit, params.application_id);
  return identity.context(q).then((answer) => checkContext(route, p, answer, params.application_id));
}

export function applyLimit(deps: EdgeDeps, ex: Exchange, key: string, policy: 'client' | 'send' | 'lookup'): void | Promise<void> {
  const rule = deps.config.rates[policy];
  const limiter = deps.rateLimiter;
  const decision = limiter.consumeSync ? limiter.consumeSync(key, rule) : (limiter.consumeLeased?.(key, rule) ?? limiter.consume(key, rule));
  return then(decision, (d) => {
    const headers = rateLimitHeaders(policy, rule, d);
    if (!d.allowed) {
      deps.metrics.rateLimited.inc({ policy });
      throw new ApiError('rate_limited', `rate limit exceeded: ${rule.limit} requests per ${rule.windowSeconds} s; retry in ${d.retryAfterSeconds} s`, headers);
    }
    Object.assign(ex.headers, headers);
  });
}

export function parseQuery(q: string): Record<string, string> {
  return q === '' ? {} : Object.fromEntries(new URLSearchParams(q));
}
