/**
 * JSON Schemas of the IdP directory's answers (docs/identity-provider.md), checked by the HTTP
 * driver before anything reaches the node: an IdP that answers a different shape is treated as
 * unavailable instead of producing wrong authorization decisions. The compile-time checks at the
 * bottom keep these schemas and the port's types (types.ts) identical.
 *
 * Unknown extra fields are allowed (an IdP may send more); unknown enum values are not, because
 * the node's decisions branch on them.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type {
  ApplicationRecord,
  CapabilityDef,
  ContextAnswer,
  MembershipAnswer,
  RevocationPage,
  RoleRecord,
  TenantRecord,
  UserProfile,
} from './types.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Str = Type.String();

export const TenantRecordSchema = Type.Object({
  tenant_id: Str,
  name: Str,
  slug: Str,
  logo_url: Nullable(Str),
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED')]),
  chat_enabled: Type.Boolean(),
});

export const ApplicationRecordSchema = Type.Object({
  application_id: Str,
  tenant_id: Str,
  name: Str,
  slug: Str,
  logo_url: Nullable(Str),
  type: Str,
  access_mode: Type.Union([Type.Literal('ALL_TENANT_MEMBERS'), Type.Literal('ASSIGNED_USERS')]),
  identity_status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')]),
  chat_enabled: Type.Boolean(),
  synced_at: Str,
  client_id: Str,
  allowed_origins: Type.Array(Str),
});

export const UserProfileSchema = Type.Object({
  user_id: Str,
  display_name: Nullable(Str),
  avatar_url: Nullable(Str),
});

export const CapabilityDefSchema = Type.Object({
  key: Str,
  description: Str,
  scope: Type.Union([Type.Literal('tenant'), Type.Literal('application')]),
});

export const RoleRecordSchema = Type.Object({
  role_id: Str,
  role: Str,
  display_name: Nullable(Str),
  role_scope: Type.Union([Type.Literal('tenant'), Type.Literal('application')]),
  application_id: Nullable(Str),
  system: Type.Boolean(),
  locked: Type.Boolean(),
  capabilities: Type.Array(Str),
});

export const MembershipAnswerSchema = Type.Object({
  profile: UserProfileSchema,
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED'), Type.Literal('REMOVED')]),
  tenant_roles: Type.Array(Str),
  tenant_capabilities: Type.Array(Str),
  application: Nullable(Type.Object({ has_access: Type.Boolean(), roles: Type.Array(Str), capabilities: Type.Array(Str) })),
});

export const ContextAnswerSchema = Type.Object({
  tenant: Nullable(TenantRecordSchema),
  application: Nullable(ApplicationRecordSchema),
  member: Nullable(MembershipAnswerSchema),
});

export const RevocationPageSchema = Type.Object({
  items: Type.Array(Type.Object({ jti: Str, exp: Type.Number() })),
  cursor: Str,
});

export const itemsOf = <T extends TSchema>(item: T) => Type.Object({ items: Type.Array(item) });

/** The parts of the OpenID discovery document the node uses. */
export const DiscoverySchema = Type.Object({
  issuer: Type.String({ minLength: 1 }),
  jwks_uri: Type.String({ minLength: 1 }),
  chat_directory_endpoint: Type.Optional(Type.String({ minLength: 1 })),
});

export const JwksSchema = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) });

// --- the schemas describe exactly the port's types ---
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function same<A, B>(proof: Same<A, B>): void {
  void proof;
}
same<Static<typeof TenantRecordSchema>, TenantRecord>(true);
same<Static<typeof ApplicationRecordSchema>, ApplicationRecord>(true);
same<Static<typeof UserProfileSchema>, UserProfile>(true);
same<Static<typeof CapabilityDefSchema>, CapabilityDef>(true);
same<Static<typeof RoleRecordSchema>, RoleRecord>(true);
same<Static<typeof MembershipAnswerSchema>, MembershipAnswer>(true);
same<Static<typeof ContextAnswerSchema>, ContextAnswer>(true);
same<Static<typeof RevocationPageSchema>, RevocationPage>(true);
