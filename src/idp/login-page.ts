/**
 * The development IdP's login page: every user of the fixture, one button each, with what they
 * are in each tenant, so a person can pick who to be. Development only (it asks no password).
 * The page has no script; its style is one inline block allowed by its hash in the CSP.
 */
import { createHash } from 'node:crypto';
import type { AuthorizeRequest } from './dev-idp-authorize.ts';
import type { Fixture } from './fixture-schema.ts';
import type { IdpHttpResponse } from './http-types.ts';

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f24}
main{max-width:40rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0003}
h1{font-size:1.4rem;margin:0 0 .25rem}p.note{margin:0 0 1rem;color:#4a4f59}
ul{list-style:none;padding:0;margin:0}li{margin:.4rem 0}
button{width:100%;text-align:left;font:inherit;padding:.6rem .8rem;border:1px solid #8a8f99;border-radius:6px;background:#fff;color:#1d1f24;cursor:pointer}
button:hover{background:#eef2ff}button:focus-visible{outline:3px solid #1a56db;outline-offset:2px}
.who{font-weight:600}.what{display:block;font-size:.875rem;color:#4a4f59}
.error{border-left:4px solid #b42318;padding:.5rem 1rem;background:#fef3f2}`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string, formTarget: string | null): IdpHttpResponse {
  const formAction = formTarget === null ? "'none'" : `'self' ${formTarget}`;
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`,
  };
}

/** What a user is, per tenant: "Acme Corporation: tenant_owner". */
function memberships(fixture: Fixture, userId: string): string {
  const parts = fixture.tenants.flatMap((t) => {
    const m = t.members.find((x) => x.user_id === userId);
    if (!m) return [];
    const roles = m.tenant_roles.join(', ') || 'member';
    return [`${t.name}: ${roles}${m.status === 'ACTIVE' ? '' : ` (${m.status.toLowerCase()})`}`];
  });
  return parts.length === 0 ? 'member of no tenant' : parts.join(' · ');
}

export function loginPage(fixture: Fixture, request: AuthorizeRequest, action: string): IdpHttpResponse {
  const hidden = Object.entries({
    response_type: 'code',
    client_id: request.client_id,
    redirect_uri: request.redirect_uri,
    state: request.state,
    code_challenge: request.code_challenge,
    code_challenge_method: 'S256',
    scope: request.scope,
    nonce: request.nonce,
  })
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');
  const users = fixture.users
    .map((u) => {
      const name = u.display_name ?? u.user_id;
      const what = `${u.user_id}${u.status === 'ACTIVE' ? '' : ' (disabled)'} — ${memberships(fixture, u.user_id)}`;
      return `<li><button type="submit" name="user_id" value="${esc(u.user_id)}"><span class="who">${esc(name)}</span><span class="what">${esc(what)}</span></button></li>`;
    })
    .join('');
  const body = `<h1>Sign in</h1><p class="note">Development identity provider: choose who to sign in as. There is no password.</p><form method="post" action="${esc(action)}">${hidden}<ul aria-label="Users">${users}</ul></form>`;
  return page('Sign in — development identity provider', body, new URL(request.redirect_uri).origin);
}

/** Errors that must not be redirected (the client or the redirect URI is not trusted). */
export function authorizeErrorPage(status: number, code: string, description: string): IdpHttpResponse {
  const res = page('Sign-in error', `<h1>Sign-in error</h1><div class="error" role="alert"><p><strong>${esc(code)}</strong></p><p>${esc(description)}</p></div>`, null);
  return Object.assign(res, { status });
}
