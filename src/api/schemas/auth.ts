/** Wire shapes of the web app's sign-in routes (routes/auth.ts). */
import { Type } from '@sinclair/typebox';
import { Closed, DateTime } from './common.ts';

const Token = Type.String({ minLength: 1, maxLength: 16384 });

export const SignInConfig = Type.Object({
  authorization_endpoint: Type.String({ description: "the identity provider's authorization endpoint (authorization code with PKCE, S256)" }),
  client_id: Type.String({ description: 'the web app\'s client at the identity provider' }),
  scope: Type.String(),
});

export const SignInRequest = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 2048, description: 'the code the authorization endpoint sent back' }),
    code_verifier: Type.String({ minLength: 43, maxLength: 128, pattern: '^[A-Za-z0-9._~-]+$', description: 'the PKCE verifier (RFC 7636)' }),
    redirect_uri: Type.String({ minLength: 1, maxLength: 2048, description: "the web app's address, as sent to the authorization endpoint" }),
  },
  Closed,
);

export const RenewRequest = Type.Object({ id_token: Token }, Closed);

export const SignOutRequest = Type.Object(
  { tokens: Type.Array(Token, { minItems: 1, maxItems: 4, description: 'the ID token and chat token to revoke' }) },
  Closed,
);

export const WebSession = Type.Object({
  access_token: Type.String({ description: 'a user chat token (scope chat:access), at most 10 minutes' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds the access token lives' }),
  id_token: Type.String({ description: "the user's ID token; renews the access token until id_token_expires_at" }),
  id_token_expires_at: DateTime,
  user_id: Type.String(),
});

/** An application the caller can chat in (GET /tenants/{tenant_id}/applications). */
export const ChatApplication = Type.Object({
  application_id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  logo_url: Type.Union([Type.String(), Type.Null()]),
});

export const ChatApplicationList = Type.Object({ items: Type.Array(ChatApplication) });
