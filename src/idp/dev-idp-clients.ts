/**
 * The OAuth clients of the fixture and how they authenticate (RFC 6749 §2.3):
 *  - confidential clients (a secret in the fixture) send it with HTTP Basic or as
 *    `client_secret` in the body (client_secret_post), never both;
 *  - public clients (secret null: browser apps) identify themselves with `client_id` alone and
 *    must not send a secret.
 * Three kinds: machine clients (client_credentials), application clients (the `client` of a
 * fixture application; bound to it) and service clients (the chat service's own web app).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Fixture, FixtureMachineClient } from './fixture-schema.ts';
import { OAuthError } from './oauth-error.ts';

export type RegisteredClient =
  | { kind: 'machine'; client_id: string; secret: string; machine: FixtureMachineClient }
  | { kind: 'application'; client_id: string; secret: string | null; tenant_id: string; application_id: string }
  | { kind: 'service'; client_id: string; secret: string | null; redirect_uris: readonly string[] };

/** Request parameters (form or JSON body); empty values are already dropped, as RFC 6749 §3.2 asks. */
export type OAuthParams = ReadonlyMap<string, string>;

export interface ClientRequest {
  params: OAuthParams;
  /** The raw Authorization header, if any. */
  authorization: string | undefined;
}

export class ClientRegistry {
  private readonly clients = new Map<string, RegisteredClient>();

  constructor(fixture: Fixture) {
    for (const t of fixture.tenants) {
      for (const a of t.applications) {
        this.clients.set(a.client.client_id, {
          kind: 'application',
          client_id: a.client.client_id,
          secret: a.client.client_secret,
          tenant_id: t.tenant_id,
          application_id: a.application_id,
        });
      }
    }
    for (const c of fixture.clients) {
      this.clients.set(
        c.client_id,
        c.kind === 'machine'
          ? { kind: 'machine', client_id: c.client_id, secret: c.client_secret, machine: c }
          : { kind: 'service', client_id: c.client_id, secret: c.client_secret, redirect_uris: c.redirect_uris ?? [] },
      );
    }
  }

  find(clientId: string): RegisteredClient | undefined {
    return this.clients.get(clientId);
  }

  /** The authenticated client of a token or revocation request, or `invalid_client`. */
  authenticate(req: ClientRequest): RegisteredClient {
    const basic = parseBasic(req.authorization);
    const postedId = req.params.get('client_id');
    const postedSecret = req.params.get('client_secret');
    let clientId: string;
    let secret: string | undefined;
    if (basic) {
      if (postedSecret !== undefined) throw new OAuthError('invalid_request', 'use one client authentication method: HTTP Basic or client_secret in the body, not both');
      if (postedId !== undefined && postedId !== basic.id) throw new OAuthError('invalid_request', 'client_id in the body differs from the one in the Authorization header');
      ({ id: clientId, secret } = basic);
    } else if (postedId !== undefined) {
      clientId = postedId;
      secret = postedSecret;
    } else {
      throw new OAuthError('invalid_client', 'client authentication is required (HTTP Basic, client_secret_post, or client_id for a public client)');
    }

    const client = this.clients.get(clientId);
    if (!client) throw new OAuthError('invalid_client', 'unknown client or wrong credentials');
    if (client.secret === null) {
      if (secret !== undefined && secret !== '') throw new OAuthError('invalid_client', `client ${clientId} is a public client and must not send a secret`);
      return client;
    }
    if (secret === undefined || !sameSecret(secret, client.secret)) throw new OAuthError('invalid_client', 'unknown client or wrong credentials');
    return client;
  }
}

/**
 * `Authorization: Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1).
 * undefined when the header is absent or uses another scheme; `invalid_client` when it is Basic
 * but malformed.
 */
function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  if (header === undefined) return undefined;
  const m = /^basic\s+(\S*)\s*$/i.exec(header);
  if (!m) return undefined;
  const encoded = m[1] ?? '';
  const malformed = () => new OAuthError('invalid_client', 'malformed HTTP Basic credentials');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw malformed();
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw malformed();
  try {
    const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw malformed();
  }
}

/** Constant-time comparison; hashing first makes the lengths equal without leaking them. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
