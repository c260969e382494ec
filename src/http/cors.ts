/**
 * CORS exactly as the contract says (docs/authorization.md, CORS):
 * - application routes: origins registered on that application's client;
 * - the tenant's presence and push-device routes: origins registered on any client of the tenant;
 * - the VAPID key route: any origin, GET only;
 * - account, tenant list, tenant capabilities, administration: no CORS headers at all.
 * Allowed origins get the origin echoed back (never `*` with credentials; no credentials at all).
 * An origin that is not registered gets no CORS headers, so the browser blocks the response.
 */
import type { AnyRoute, CorsPolicy } from '../api/route.ts';
import type { IdentityService } from '../identity/identity-service.ts';
import type { ApplicationRecord, ContextAnswer } from '../identity/types.ts';

export const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
export const ALLOWED_HEADERS = 'Content-Type, Authorization, Idempotency-Key, Last-Event-ID, X-Request-Id';
export const EXPOSED_HEADERS = 'Retry-After, RateLimit, RateLimit-Policy, X-Request-Id';
const PREFLIGHT_MAX_AGE = '600';

/**
 * Is `origin` registered for the context of this request? Answers synchronously from the identity
 * cache when it can. When the IdP cannot be asked, the last answer ever seen decides (CORS only
 * lets a browser read the response — authorization is decided separately and fails with
 * identity_unavailable — so the 503 and its Retry-After stay readable); never seen means "no".
 */
export function originAllowed(
  identity: IdentityService,
  policy: CorsPolicy,
  params: Record<string, string>,
  origin: string,
): boolean | Promise<boolean> {
  const tenantId = params.tenant_id;
  switch (policy) {
    case 'none':
      return false;
    case 'public-read':
      return true;
    case 'application': {
      const appId = params.application_id;
      if (tenantId === undefined || appId === undefined) return false;
      const q = { tenant_id: tenantId, application_id: appId };
      const has = (a: ContextAnswer): boolean => a.application?.allowed_origins.includes(origin) ?? false;
      const hit = identity.peekContext(q);
      return hit ? has(hit) : identity.context(q).then(has, () => {
        const last = identity.lastKnownContext(q);
        return last ? has(last) : false;
      });
    }
    case 'tenant': {
      if (tenantId === undefined) return false;
      const has = (apps: ApplicationRecord[]): boolean => apps.some((a) => a.allowed_origins.includes(origin));
      const hit = identity.peekApplications(tenantId);
      return hit ? has(hit) : identity.applications(tenantId).then(has, () => {
        const last = identity.lastKnownApplications(tenantId);
        return last ? has(last) : false;
      });
    }
  }
}

/** Headers for an actual (non-preflight) response to an allowed origin. */
export function corsHeaders(policy: CorsPolicy, origin: string): Record<string, string> {
  if (policy === 'public-read') {
    return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS };
  }
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED_HEADERS, Vary: 'Origin' };
}

/** Headers answering a preflight for the routes sharing one path. */
export function preflightHeaders(policy: CorsPolicy, origin: string): Record<string, string> {
  const base = {
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Max-Age': PREFLIGHT_MAX_AGE,
  };
  if (policy === 'public-read') {
    return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET', ...base };
  }
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Methods': ALLOWED_METHODS, Vary: 'Origin', ...base };
}

/** The policy of a preflight: that of the route serving the requested method on this path. */
export function pathPolicy(routes: AnyRoute[], requestedMethod: string): CorsPolicy {
  const route = routes.find((r) => r.method === requestedMethod);
  if (route) return route.cors;
  return 'none';
}
