/**
 * The development IdP's fixture format: one JSON Schema (TypeBox) per part, and the TS types
 * derived from it, so what ajv accepts and what the code reads can never disagree.
 *
 * The schema checks shapes only; references between parts (role names, tenant and application
 * ids, duplicates) are checked by `fixture.ts`, which reports every problem at once.
 * docs/identity-provider.md describes the format with an excerpt of the demo fixture.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/*
 * `type: [x, 'null']` and `enum` instead of TypeBox's anyOf-based unions: ajv then reports one
 * readable problem per field ("must be string,null", "must be equal to one of the allowed values")
 * instead of one per union branch.
 */
const Nullable = <T extends TSchema & { type: string }>(schema: T) =>
  Type.Unsafe<Static<T> | null>(Object.assign({}, schema, { type: [schema.type, 'null'] }));
const Enum = <const V extends readonly string[]>(values: V) => Type.Unsafe<V[number]>({ type: 'string', enum: [...values] });

/** Ids are opaque strings, but non-empty and free of whitespace so they survive URLs and logs. */
const Id = Type.String({ minLength: 1, maxLength: 200, pattern: '^\\S+$' });
const Text = Type.String({ minLength: 1, maxLength: 500 });
const Url = Type.String({ minLength: 1, maxLength: 2000, format: 'uri' });

export const CapabilitySchema = Type.Object(
  {
    key: Type.String({ pattern: '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)*$', maxLength: 200 }),
    description: Type.String({ maxLength: 500 }),
    scope: Enum(['tenant', 'application']),
  },
  { additionalProperties: false },
);

export const UserSchema = Type.Object(
  {
    user_id: Id,
    display_name: Nullable(Text),
    avatar_url: Nullable(Url),
    status: Enum(['ACTIVE', 'DISABLED']),
  },
  { additionalProperties: false },
);

export const RoleSchema = Type.Object(
  {
    role_id: Id,
    /** The role's name; members, default_roles and the admin mapping refer to roles by it. */
    role: Id,
    display_name: Nullable(Text),
    role_scope: Enum(['tenant', 'application']),
    /** Application roles: the one application it belongs to, or null for every application of the tenant. */
    application_id: Nullable(Id),
    system: Type.Boolean(),
    /** A locked role (tenant_owner) holds every catalog key whatever its list says. */
    locked: Type.Boolean(),
    capabilities: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export const ApplicationClientSchema = Type.Object(
  {
    client_id: Id,
    /** null: a public client (a browser app), identified by client_id alone. */
    client_secret: Nullable(Type.String({ minLength: 8 })),
    allowed_origins: Type.Array(Type.String({ pattern: '^https?://[^/?#\\s]+$' })),
  },
  { additionalProperties: false },
);

export const ApplicationSchema = Type.Object(
  {
    application_id: Id,
    name: Text,
    slug: Id,
    logo_url: Nullable(Url),
    type: Id,
    access_mode: Enum(['ALL_TENANT_MEMBERS', 'ASSIGNED_USERS']),
    identity_status: Enum(['ACTIVE', 'DISABLED']),
    chat_enabled: Type.Boolean(),
    synced_at: Type.String({ format: 'date-time' }),
    /** Application roles of members without an entry for this application (ALL_TENANT_MEMBERS). */
    default_roles: Type.Array(Id),
    client: ApplicationClientSchema,
  },
  { additionalProperties: false },
);

export const MemberSchema = Type.Object(
  {
    user_id: Id,
    status: Enum(['ACTIVE', 'SUSPENDED', 'REMOVED']),
    tenant_roles: Type.Array(Id),
    /** Per application: the member's application roles; for ASSIGNED_USERS the entry is the access grant. */
    applications: Type.Record(Type.String(), Type.Object({ roles: Type.Array(Id) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const TenantSchema = Type.Object(
  {
    tenant_id: Id,
    name: Text,
    slug: Id,
    logo_url: Nullable(Url),
    status: Enum(['ACTIVE', 'SUSPENDED']),
    chat_enabled: Type.Boolean(),
    roles: Type.Array(RoleSchema),
    applications: Type.Array(ApplicationSchema),
    members: Type.Array(MemberSchema),
  },
  { additionalProperties: false },
);

/** A backend client: client_credentials only, bound to one tenant application. */
export const MachineClientSchema = Type.Object(
  {
    client_id: Id,
    client_secret: Type.String({ minLength: 8 }),
    kind: Type.Literal('machine'),
    tenant_id: Id,
    application_id: Id,
    scopes: Type.Array(Type.String({ pattern: '^chat:' }), { minItems: 1 }),
    /** Short lifetimes (down to 1 s) exist for tests of expiry. */
    token_ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

/** The chat service's own web app: authorization code (PKCE) and token exchange, not bound to a context. */
export const ServiceClientSchema = Type.Object(
  {
    client_id: Id,
    client_secret: Nullable(Type.String({ minLength: 8 })),
    kind: Type.Literal('service'),
    /**
     * Where the authorization endpoint may send the user back (exact match; a loopback URI
     * matches on any port, RFC 8252 §7.3). Absent: the client cannot use authorization codes.
     */
    redirect_uris: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2000, pattern: '^https?://[^#]+$' }))),
  },
  { additionalProperties: false },
);

const Base64Url = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' });

/**
 * A private ES256 signing key as a JWK (RFC 7517/7518 §6.2): what `jose.exportJWK` or
 * `crypto.KeyObject.export({ format: 'jwk' })` gives for a P-256 private key, plus its `kid`.
 * The schema checks the shape; the loader checks that the numbers form a valid key pair.
 */
export const SigningKeySchema = Type.Object(
  {
    kty: Type.Literal('EC'),
    crv: Type.Literal('P-256'),
    x: Base64Url,
    y: Base64Url,
    d: Base64Url,
    kid: Id,
    alg: Type.Optional(Type.Literal('ES256')),
    use: Type.Optional(Type.Literal('sig')),
  },
  { additionalProperties: false },
);

export const FixtureSchema = Type.Object(
  {
    resource_identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    /**
     * Optional fixed signing keys: the first signs, every one is published in the JWKS. Without
     * it the IdP generates a key at start, so its tokens die with the process.
     */
    signing_keys: Type.Optional(Type.Array(SigningKeySchema, { minItems: 1 })),
    directory_api_keys: Type.Array(Type.String({ minLength: 8, maxLength: 500 })),
    capabilities: Type.Array(CapabilitySchema),
    users: Type.Array(UserSchema),
    tenants: Type.Array(TenantSchema),
    // ajv's discriminator picks the branch by `kind`, so only that branch's problems are reported.
    clients: Type.Array(
      Type.Unsafe<Static<typeof MachineClientSchema> | Static<typeof ServiceClientSchema>>({
        type: 'object',
        required: ['kind'],
        properties: { kind: { type: 'string', enum: ['machine', 'service'] } },
        discriminator: { propertyName: 'kind' },
        oneOf: [MachineClientSchema, ServiceClientSchema],
      }),
    ),
  },
  { additionalProperties: false },
);

export type FixtureInput = Static<typeof FixtureSchema>;
export type FixtureCapability = Static<typeof CapabilitySchema>;
export type FixtureSigningKey = Static<typeof SigningKeySchema>;
export type FixtureUser = Static<typeof UserSchema>;
export type FixtureRole = Static<typeof RoleSchema>;
export type FixtureApplication = Static<typeof ApplicationSchema>;
export type FixtureMember = Static<typeof MemberSchema>;
export type FixtureTenant = Static<typeof TenantSchema>;
export type FixtureServiceClient = Static<typeof ServiceClientSchema>;
export type FixtureMachineClient = Static<typeof MachineClientSchema> & { token_ttl_seconds: number };

/** A loaded fixture: defaults applied, references checked. */
export interface Fixture extends Omit<FixtureInput, 'resource_identifier' | 'clients'> {
  resource_identifier: string;
  clients: (FixtureMachineClient | FixtureServiceClient)[];
}

export const DEFAULT_RESOURCE_IDENTIFIER = 'urn:chat:api';
export const DEFAULT_MACHINE_TOKEN_TTL_SECONDS = 3600;
