/**
 * The IdP's route table, as data: method, path pattern (`:name` captures a percent-decoded
 * segment), guard, handler. http.ts matches, guards and renders errors; handlers only map a
 * request to a DevIdp call. docs/identity-provider.md documents each route.
 */
import type { DevIdp } from './dev-idp.ts';
import { bodyParams } from './http-params.ts';
import { json, type IdpHttpRequest, type IdpHttpResponse } from './http-types.ts';
import { OAuthError } from './oauth-error.ts';
import { authorizeErrorPage, loginPage } from './login-page.ts';
import type { OAuthParams } from './dev-idp-clients.ts';

export interface IdpRoute {
  method: 'GET' | 'POST';
  path: string;
  /** `directory`: needs `Authorization: Bearer <directory key>`; `dev`: exists only with devLogin. */
  guard?: 'directory' | 'dev';
  handle(idp: DevIdp, req: IdpHttpRequest, params: Readonly<Record<string, string>>): Promise<IdpHttpResponse> | IdpHttpResponse;
}

/** The most user ids one profiles request may name. */
export const MAX_PROFILE_IDS = 500;

const PUBLIC_CACHE = { 'cache-control': 'public, max-age=60' };

export const IDP_ROUTES: readonly IdpRoute[] = [
  { method: 'GET', path: '/.well-known/openid-configuration', handle: (idp) => json(200, idp.discovery(), PUBLIC_CACHE) },
  { method: 'GET', path: '/jwks.json', handle: (idp) => json(200, idp.jwks(), PUBLIC_CACHE) },
  {
    method: 'POST',
    path: '/oauth/token',
    handle: async (idp, req) => json(200, await idp.tokenEndpoint({ params: bodyParams(req), authorization: req.headers.authorization })),
  },
  // The login page of the authorization code flow (dev-idp-authorize.ts). Its errors are pages.
  {
    method: 'GET',
    path: '/oauth/authorize',
    guard: 'dev',
    handle: (idp, req) =>
      asPage(() => {
        const outcome = idp.authorize(queryParams(req));
        return outcome.kind === 'redirect' ? redirect(outcome.location) : loginPage(idp.fixture, outcome.request, 'authorize');
      }),
  },
  { method: 'POST', path: '/oauth/authorize', guard: 'dev', handle: (idp, req) => asPage(() => redirect(idp.approve(bodyParams(req)))) },
  {
    method: 'POST',
    path: '/oauth/revoke',
    handle: async (idp, req) => {
      await idp.revoke({ params: bodyParams(req), authorization: req.headers.authorization });
      return { status: 200, headers: { 'cache-control': 'no-store' }, body: '' };
    },
  },
  { method: 'POST', path: '/dev/login', guard: 'dev', handle: async (idp, req) => json(200, await idp.login(bodyParams(req))) },
  { method: 'POST', path: '/dev/rotate-keys', guard: 'dev', handle: (idp) => json(200, { kid: idp.rotateKeys() }) },

  {
    method: 'GET',
    path: '/directory/context',
    guard: 'directory',
    handle: (idp, req) => {
      const tenant_id = queryParam(req, 'tenant_id');
      if (tenant_id === undefined) throw new OAuthError('invalid_request', 'tenant_id is required');
      const application_id = queryParam(req, 'application_id');
      const user_id = queryParam(req, 'user_id');
      return json(200, idp.context({ tenant_id, ...(application_id ? { application_id } : {}), ...(user_id ? { user_id } : {}) }));
    },
  },
  {
    method: 'GET',
    path: '/directory/users/:user_id/tenants',
    guard: 'directory',
    handle: (idp, _req, p) => {
      const userId = p.user_id ?? '';
      if (!idp.hasUser(userId)) throw new OAuthError('user_not_found', `unknown user ${userId}`);
      return json(200, { items: idp.userTenants(userId) });
    },
  },
  {
    method: 'GET',
    path: '/directory/tenants/:tenant_id/applications',
    guard: 'directory',
    handle: (idp, _req, p) => json(200, { items: idp.applications(knownTenant(idp, p)) }),
  },
  {
    method: 'GET',
    path: '/directory/tenants/:tenant_id/roles',
    guard: 'directory',
    handle: (idp, req, p) => {
      const tenantId = knownTenant(idp, p);
      const appId = queryParam(req, 'application_id') ?? null;
      if (appId !== null && !idp.hasApplication(tenantId, appId)) {
        throw new OAuthError('application_not_found', `unknown application ${appId} in tenant ${tenantId}`);
      }
      return json(200, { items: idp.roles(tenantId, appId) });
    },
  },
  { method: 'GET', path: '/directory/capabilities', guard: 'directory', handle: (idp) => json(200, { items: idp.capabilityCatalog() }) },
  {
    method: 'GET',
    path: '/directory/tenants/:tenant_id/profiles',
    guard: 'directory',
    handle: (idp, req, p) => {
      const tenantId = knownTenant(idp, p);
      const ids = (queryParam(req, 'user_ids') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
      if (ids.length > MAX_PROFILE_IDS) throw new OAuthError('invalid_request', `at most ${MAX_PROFILE_IDS} user_ids per request`);
      return json(200, { items: idp.profiles(tenantId, ids) });
    },
  },
  {
    method: 'GET',
    path: '/directory/revocations',
    guard: 'directory',
    handle: (idp, req) => json(200, idp.revocations(queryParam(req, 'after') ?? null)),
  },
];

function redirect(location: string): IdpHttpResponse {
  return { status: 303, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }, body: '' };
}

/** A person reads these answers: OAuth errors become an HTML page, never a redirect. */
function asPage(run: () => IdpHttpResponse): IdpHttpResponse {
  try {
    return run();
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    return authorizeErrorPage(err.status, err.code, err.description);
  }
}

/** Every query parameter; empty ones count as absent, a repeated one is `invalid_request` (RFC 6749 §3.1). */
function queryParams(req: IdpHttpRequest): OAuthParams {
  const params = new Map<string, string>();
  for (const [k, v] of req.query) {
    if (params.has(k)) throw new OAuthError('invalid_request', `parameter ${k} is given more than once`);
    if (v !== '') params.set(k, v);
  }
  return params;
}

/** A query parameter; undefined when absent or empty, `invalid_request` when repeated. */
function queryParam(req: IdpHttpRequest, name: string): string | undefined {
  const all = req.query.getAll(name);
  if (all.length > 1) throw new OAuthError('invalid_request', `query parameter ${name} is given more than once`);
  return all[0] === '' ? undefined : all[0];
}

function knownTenant(idp: DevIdp, p: Readonly<Record<string, string>>): string {
  const tenantId = p.tenant_id ?? '';
  if (!idp.hasTenant(tenantId)) throw new OAuthError('tenant_not_found', `unknown tenant ${tenantId}`);
  return tenantId;
}
