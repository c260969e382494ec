import { Type } from '@sinclair/typebox';
import { Closed, DateTime, Nullable } from './common.ts';

export const TenantEntry = Type.Object({
  tenant_id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  logo_url: Nullable(Type.String()),
});

export const TenantList = Type.Object({ items: Type.Array(TenantEntry) });

export const CallerCapabilities = Type.Object({
  tenant_id: Type.String(),
  application_id: Nullable(Type.String()),
  principal_type: Type.Union([Type.Literal('user'), Type.Literal('machine')]),
  roles: Type.Array(Type.String()),
  capabilities: Type.Array(Type.String()),
});

export const Me = Type.Object({
  user_id: Type.String(),
  display_name: Type.String({ description: 'falls back to the user id' }),
  avatar_url: Nullable(Type.String()),
  client_id: Type.String({ description: 'the OAuth client the token was issued to' }),
  scopes: Type.Array(Type.String()),
  tenant_id: Nullable(Type.String({ description: 'the tenant the token is bound to, if any' })),
  application_id: Nullable(Type.String({ description: 'the application the token is bound to, if any' })),
  token_expires_at: DateTime,
});

export const VapidKey = Type.Object({ public_key: Type.String() });

export const NoQuery = Type.Object({}, Closed);
