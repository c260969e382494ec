/**
 * Sign-in of the service's own web app (identity/web-sign-in.ts): no token, no CORS (the node's
 * own origin only), answers never cached. The contract's sign-in errors come from here.
 */
import type { Static } from '@sinclair/typebox';
import { defineRoute, Reply } from '../route.ts';
import { NoQuery } from '../schemas/identity.ts';
import { RenewRequest, SignInConfig, SignInRequest, SignOutRequest, WebSession } from '../schemas/auth.ts';
import type { Services } from '../services.ts';
import type { WebSignIn } from '../../identity/web-sign-in.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };

const AUTH_ROUTE = {
  tag: 'Sign-in',
  audience: ['public' as const],
  scopes: {},
  context: 'none' as const,
  cors: 'none' as const,
};

function signIn(services: Services): WebSignIn {
  if (!services.signIn) throw new Error('unreachable: the node always wires sign-in');
  return services.signIn;
}

export const getSignInConfig = defineRoute({
  ...AUTH_ROUTE,
  operationId: 'getSignInConfig',
  summary: "Where the web app sends the user to sign in: the identity provider's authorization endpoint and the app's client id",
  method: 'GET',
  path: '/auth/config',
  schemas: { query: NoQuery, response: SignInConfig },
  status: 200,
  errors: ['identity_unavailable'],
  async handler({ services }): Promise<Reply<Static<typeof SignInConfig>>> {
    return new Reply(200, await signIn(services).config(), NO_STORE);
  },
});

export const signInWithCode = defineRoute({
  ...AUTH_ROUTE,
  operationId: 'signIn',
  summary: 'Trades the authorization code (with its PKCE verifier) for a chat token and the user\'s ID token',
  description:
    'redirect_uri must be the web app\'s own address (invalid_redirect_uri); a code the identity provider refuses is invalid_grant; a user it does not let chat is chat_access_not_granted.',
  method: 'POST',
  path: '/auth/sign-in',
  schemas: { query: NoQuery, body: SignInRequest, response: WebSession },
  status: 200,
  errors: ['invalid_redirect_uri', 'invalid_grant', 'invalid_id_token', 'chat_access_not_granted', 'identity_unavailable'],
  async handler({ body, services }): Promise<Reply<Static<typeof WebSession>>> {
    return new Reply(200, await signIn(services).signIn(body.code, body.code_verifier, body.redirect_uri), NO_STORE);
  },
});

export const renewSession = defineRoute({
  ...AUTH_ROUTE,
  operationId: 'renewSession',
  summary: 'A fresh chat token for the ID token of the sign-in (user tokens live at most 10 minutes and have no refresh token)',
  description: 'An ID token the identity provider no longer accepts (expired, revoked, foreign) is invalid_id_token: sign in again.',
  method: 'POST',
  path: '/auth/renew',
  schemas: { query: NoQuery, body: RenewRequest, response: WebSession },
  status: 200,
  errors: ['invalid_id_token', 'chat_access_not_granted', 'identity_unavailable'],
  async handler({ body, services }): Promise<Reply<Static<typeof WebSession>>> {
    return new Reply(200, await signIn(services).renew(body.id_token), NO_STORE);
  },
});

export const signOut = defineRoute({
  ...AUTH_ROUTE,
  operationId: 'signOut',
  summary: 'Revokes the sign-in\'s tokens at the identity provider; 204 also for tokens that are unknown or already dead',
  method: 'POST',
  path: '/auth/sign-out',
  schemas: { query: NoQuery, body: SignOutRequest },
  status: 204,
  errors: ['identity_unavailable'],
  async handler({ body, services }): Promise<void> {
    await signIn(services).signOut(body.tokens);
  },
});
