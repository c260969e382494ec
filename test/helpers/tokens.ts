/** Real tokens from the development IdP (embedded in a node at /idp, or standalone). */

async function form(url: string, fields: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** Demo client secrets; a client not listed (added by helpers/fixture.ts) uses `<client_id>-secret`. */
export const SECRETS: Record<string, string> = {
  'acme-support-web': 'acme-support-web-secret',
  'acme-support-backend': 'acme-support-backend-secret',
  'acme-support-reader': 'acme-support-reader-secret',
  'globex-portal-backend': 'globex-portal-backend-secret',
};

/** The user's own token (development login), as an app would hold it after sign-in. */
export async function idToken(idp: string, userId: string, clientId = 'acme-support-web'): Promise<string> {
  return (await form(`${idp}/dev/login`, { user_id: userId, client_id: clientId })).id_token as string;
}

/** A chat user token: the user's own token exchanged (RFC 8693) by the client. */
export async function userToken(idp: string, userId: string, clientId = 'acme-support-web'): Promise<string> {
  const subject = await idToken(idp, userId, clientId);
  const fields: Record<string, string> = {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: subject,
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    resource: 'urn:chat:api',
    scope: 'chat:access',
    client_id: clientId,
  };
  const secret = SECRETS[clientId];
  if (secret) fields.client_secret = secret;
  return (await form(`${idp}/oauth/token`, fields)).access_token as string;
}

/** A machine token (client_credentials). */
export async function machineToken(idp: string, clientId = 'acme-support-backend', scope?: string): Promise<string> {
  const fields: Record<string, string> = { grant_type: 'client_credentials', client_id: clientId, client_secret: SECRETS[clientId] ?? `${clientId}-secret` };
  if (scope) fields.scope = scope;
  return (await form(`${idp}/oauth/token`, fields)).access_token as string;
}

export async function revoke(idp: string, token: string, clientId: string): Promise<void> {
  const res = await fetch(`${idp}/oauth/revoke`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, client_id: clientId, client_secret: SECRETS[clientId] ?? '' }).toString(),
  });
  if (!res.ok) throw new Error(`revoke answered ${res.status}`);
}
