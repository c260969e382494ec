/**
 * The two ways the node reaches the IdP's OAuth endpoints for the web app's sign-in
 * (web-sign-in.ts): in-process for the embedded development IdP, over HTTP for any other, at the
 * endpoints its discovery document names.
 */
import type { DevIdp } from '../idp/dev-idp.ts';
import type { IdpHandler } from '../idp/http-types.ts';
import { IdentityUnavailableError } from './types.ts';
import type { OAuthEndpoints, OAuthTransport } from './web-sign-in.ts';

const DEFAULT_RESOURCE = 'urn:chat:api';

/** The embedded IdP: its HTTP handler called directly, without a socket. */
export function embeddedTransport(idp: DevIdp, handler: IdpHandler): OAuthTransport {
  return {
    async endpoints() {
      const d = idp.discovery();
      if (d.authorization_endpoint === undefined) {
        throw new IdentityUnavailableError('the embedded IdP has no authorization endpoint: development sign-in is off (CHAT_IDP_DEV_LOGIN=false)');
      }
      return { authorization_endpoint: d.authorization_endpoint, token_endpoint: d.token_endpoint, revocation_endpoint: d.revocation_endpoint, resource: d.chat_resource_identifier };
    },
    async post(url, form) {
      const issuer = idp.issuer();
      if (!url.startsWith(issuer)) throw new Error(`not an endpoint of the embedded IdP: ${url}`);
      const res = await handler({
        method: 'POST',
        path: url.slice(issuer.length),
        query: new URLSearchParams(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(new URLSearchParams(form).toString()),
      });
      return { status: res.status, body: parseJson(res.body) };
    },
  };
}

/** An IdP over HTTP: discovery read once (retried after a failure), then plain form POSTs. */
export function httpTransport(baseUrl: string, timeoutMs: number): OAuthTransport {
  const base = baseUrl.replace(/\/+$/, '');
  let known: OAuthEndpoints | null = null;
  const fetchJson = async (url: string, init: RequestInit): Promise<{ status: number; body: unknown }> => {
    try {
      const res = await fetch(url, Object.assign({ signal: AbortSignal.timeout(timeoutMs) }, init));
      return { status: res.status, body: parseJson(await res.text()) };
    } catch (err) {
      throw new IdentityUnavailableError(`identity provider request to ${new URL(url).pathname} failed: ${(err as Error).message}`, { cause: err });
    }
  };
  return {
    async endpoints() {
      if (known) return known;
      const { status, body } = await fetchJson(`${base}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } });
      const d = body as Record<string, unknown> | undefined;
      if (status !== 200 || typeof d?.token_endpoint !== 'string') throw new IdentityUnavailableError(`identity provider discovery answered ${status} without a token_endpoint`);
      if (typeof d.authorization_endpoint !== 'string') throw new IdentityUnavailableError('the identity provider names no authorization_endpoint: the web app cannot sign users in');
      known = {
        authorization_endpoint: d.authorization_endpoint,
        token_endpoint: d.token_endpoint,
        revocation_endpoint: typeof d.revocation_endpoint === 'string' ? d.revocation_endpoint : null,
        resource: typeof d.chat_resource_identifier === 'string' ? d.chat_resource_identifier : DEFAULT_RESOURCE,
      };
      return known;
    },
    post(url, form) {
      return fetchJson(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams(form).toString(),
      });
    },
  };
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
