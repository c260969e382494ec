/** Wire shapes of tenant administration: overview, role-permission mapping, settings. */
import { Type } from '@sinclair/typebox';
import { Closed, DateTime, Id, Nullable } from './common.ts';

export const TenantOverview = Type.Object({
  tenant: Type.Object({ tenant_id: Type.String(), name: Type.String(), slug: Type.String(), logo_url: Nullable(Type.String()) }),
  applications: Type.Integer({ description: 'applications of the tenant whose identity status is ACTIVE' }),
  chat_enabled_applications: Type.Integer({ description: 'of those, the ones with chat enabled' }),
  members: Type.Integer({ description: 'distinct users with an ACTIVE membership in a conversation of the tenant' }),
  conversations: Type.Object({ direct: Type.Integer(), group: Type.Integer(), channel: Type.Integer(), total: Type.Integer() }),
});

const RoleScope = Type.Union([Type.Literal('tenant'), Type.Literal('application')]);
const Source = Type.Union([Type.Literal('IDP'), Type.Literal('TENANT_OVERRIDE'), Type.Literal('APPLICATION_OVERRIDE')], {
  description: 'where `capabilities` comes from: the IdP, the tenant-wide mapping, or this application mapping (an addition)',
});

export const RoleMappingItem = Type.Object({
  role_id: Type.String(),
  role: Type.String(),
  display_name: Nullable(Type.String()),
  role_scope: RoleScope,
  application_id: Nullable(Type.String({ description: 'application roles: the one application it belongs to; null when it applies to every application (an addition)' })),
  system: Type.Boolean(),
  locked: Type.Boolean({ description: 'true for tenant_owner: holds every capability, not editable' }),
  capabilities: Type.Array(Type.String(), { description: 'what the role grants in chat here' }),
  idp_capabilities: Type.Array(Type.String(), { description: 'what the IdP gives the role (an addition)' }),
  source: Source,
});

export const RoleMapping = Type.Object({
  application_id: Nullable(Type.String({ description: 'null: the tenant-wide mapping' })),
  available_capabilities: Type.Array(Type.Object({ key: Type.String(), description: Type.String() })),
  missing_capabilities: Type.Array(Type.String()),
  items: Type.Array(RoleMappingItem),
  note: Type.String(),
});

export const RoleMappingQuery = Type.Object(
  { application_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'an application of the tenant; omit for the tenant-wide mapping' })) },
  Closed,
);

export const RoleMappingPatch = Type.Object(
  {
    application_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'the mapping to change; omitted or null: tenant-wide' }))),
    role_id: Id,
    capabilities: Nullable(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 100,
        description: "the role's complete new list (replaces it); null drops the override, back to the inherited list",
      }),
    ),
  },
  Closed,
);

/** Upper bound on retention: 100 years; null keeps messages forever. */
export const MAX_RETENTION_DAYS = 36_500;

const RetentionDays = Nullable(
  Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS, description: 'integer >= 1 (at most 36,500); null keeps messages forever' }),
);

export const Settings = Type.Object({
  message_retention_days: RetentionDays,
  updated_at: Nullable(DateTime),
});

export const SettingsPatch = Type.Object({ message_retention_days: Type.Optional(RetentionDays) }, Closed);
