/**
 * Loading a fixture: JSON parse, schema check (fixture-schema.ts), then the references between
 * parts. Every problem is collected and reported in one Error, so a broken fixture is fixed in
 * one pass rather than one complaint per restart.
 */
import { readFile } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { MACHINE_SCOPES } from '../identity/catalog.ts';
import { importSigningKey } from './dev-idp-keys.ts';
import {
  DEFAULT_MACHINE_TOKEN_TTL_SECONDS,
  DEFAULT_RESOURCE_IDENTIFIER,
  FixtureSchema,
  type Fixture,
  type FixtureInput,
  type FixtureRole,
  type FixtureTenant,
} from './fixture-schema.ts';

export type * from './fixture-schema.ts';

// ajv-formats ships CommonJS with `exports.default`; under ESM the callable is one level down.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, discriminator: true });
addFormats(ajv);
const validateShape = ajv.compile<FixtureInput>(FixtureSchema);

export class FixtureError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid IdP fixture ${source}:\n  - ${problems.join('\n  - ')}`);
    this.name = 'FixtureError';
  }
}

export async function loadFixture(path: string): Promise<Fixture> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new FixtureError(path, [`cannot read the file: ${(err as Error).message}`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FixtureError(path, [`not valid JSON: ${(err as Error).message}`]);
  }
  return parseFixture(value, path);
}

/** Validates an already parsed fixture; `source` names it in the error message. */
export function parseFixture(value: unknown, source = 'fixture'): Fixture {
  if (!validateShape(value)) {
    throw new FixtureError(source, (validateShape.errors ?? []).map(describeSchemaError));
  }
  const fixture: Fixture = {
    resource_identifier: value.resource_identifier ?? DEFAULT_RESOURCE_IDENTIFIER,
    ...(value.signing_keys ? { signing_keys: value.signing_keys } : {}),
    directory_api_keys: value.directory_api_keys,
    capabilities: value.capabilities,
    users: value.users,
    tenants: value.tenants,
    clients: value.clients.map((c) =>
      c.kind === 'machine' ? Object.assign({}, c, { token_ttl_seconds: c.token_ttl_seconds ?? DEFAULT_MACHINE_TOKEN_TTL_SECONDS }) : c,
    ),
  };
  const problems = referenceProblems(fixture);
  if (problems.length > 0) throw new FixtureError(source, problems);
  return fixture;
}

function describeSchemaError(e: ErrorObject): string {
  const at = e.instancePath === '' ? '(root)' : e.instancePath;
  if (e.keyword === 'additionalProperties') return `${at} has unknown property "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'type') return `${at} must be ${([] as unknown[]).concat(e.params.type).join(' or ')}`;
  if (e.keyword === 'const') return `${at} must be ${JSON.stringify(e.params.allowedValue)}`;
  if (e.keyword === 'enum') return `${at} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
  return `${at} ${e.message ?? 'is invalid'}`;
}

/** Remembers ids seen in one namespace and reports each duplicate once. */
function uniqueness(problems: string[], what: string) {
  const seen = new Set<string>();
  return (id: string, where: string): void => {
    if (seen.has(id)) problems.push(`${where}: duplicate ${what} "${id}"`);
    seen.add(id);
  };
}

function referenceProblems(f: Fixture): string[] {
  const problems: string[] = [];
  const kidOnce = uniqueness(problems, 'signing key kid');
  (f.signing_keys ?? []).forEach((k, i) => {
    kidOnce(k.kid, `/signing_keys/${i}`);
    try {
      importSigningKey(k);
    } catch (err) {
      problems.push(`/signing_keys/${i}: ${(err as Error).message}`);
    }
  });
  const catalog = new Set(f.capabilities.map((c) => c.key));
  const users = new Set(f.users.map((u) => u.user_id));
  const capOnce = uniqueness(problems, 'capability key');
  f.capabilities.forEach((c, i) => capOnce(c.key, `/capabilities/${i}`));
  const userOnce = uniqueness(problems, 'user_id');
  f.users.forEach((u, i) => userOnce(u.user_id, `/users/${i}`));
  const tenantOnce = uniqueness(problems, 'tenant_id');
  // Every client_id is one namespace: the token endpoint looks clients up by it alone.
  const clientOnce = uniqueness(problems, 'client_id');

  f.tenants.forEach((t, ti) => {
    const at = `/tenants/${ti}`;
    tenantOnce(t.tenant_id, at);
    tenantProblems(t, at, catalog, users, problems);
    t.applications.forEach((a, ai) => clientOnce(a.client.client_id, `${at}/applications/${ai}/client`));
  });

  f.clients.forEach((c, i) => {
    const at = `/clients/${i}`;
    clientOnce(c.client_id, at);
    if (c.kind !== 'machine') return;
    const tenant = f.tenants.find((t) => t.tenant_id === c.tenant_id);
    if (!tenant) problems.push(`${at}: unknown tenant_id "${c.tenant_id}"`);
    else if (!tenant.applications.some((a) => a.application_id === c.application_id)) {
      problems.push(`${at}: unknown application_id "${c.application_id}" in tenant "${c.tenant_id}"`);
    }
    for (const s of c.scopes) {
      if (!Object.hasOwn(MACHINE_SCOPES, s)) problems.push(`${at}: unknown scope "${s}" (known: ${Object.keys(MACHINE_SCOPES).join(', ')})`);
    }
  });
  return problems;
}

function tenantProblems(t: FixtureTenant, at: string, catalog: Set<string>, users: Set<string>, problems: string[]): void {
  const apps = new Set<string>();
  const appOnce = uniqueness(problems, 'application_id');
  t.applications.forEach((a, i) => {
    appOnce(a.application_id, `${at}/applications/${i}`);
    apps.add(a.application_id);
  });

  const roleIdOnce = uniqueness(problems, 'role_id');
  const tenantRoleOnce = uniqueness(problems, 'tenant role name');
  t.roles.forEach((r, i) => {
    const rat = `${at}/roles/${i}`;
    roleIdOnce(r.role_id, rat);
    for (const key of r.capabilities) if (!catalog.has(key)) problems.push(`${rat}: capability "${key}" is not in the catalog`);
    if (r.role_scope === 'tenant') {
      tenantRoleOnce(r.role, rat);
      if (r.application_id !== null) problems.push(`${rat}: a tenant role must have application_id null`);
    } else {
      if (r.locked) problems.push(`${rat}: only tenant roles can be locked`);
      if (r.application_id !== null && !apps.has(r.application_id)) problems.push(`${rat}: unknown application_id "${r.application_id}"`);
    }
  });
  // Application role names must be unambiguous within each application they apply to.
  for (const appId of apps) {
    const once = uniqueness(problems, `application role name for "${appId}"`);
    t.roles.forEach((r, i) => {
      if (appliesTo(r, appId)) once(r.role, `${at}/roles/${i}`);
    });
  }

  const tenantRoles = new Set(t.roles.filter((r) => r.role_scope === 'tenant').map((r) => r.role));
  const appRolesFor = (appId: string) => new Set(t.roles.filter((r) => appliesTo(r, appId)).map((r) => r.role));

  t.applications.forEach((a, i) => {
    const known = appRolesFor(a.application_id);
    for (const name of a.default_roles) {
      if (!known.has(name)) problems.push(`${at}/applications/${i}: unknown default role "${name}" for application "${a.application_id}"`);
    }
  });

  const memberOnce = uniqueness(problems, 'member user_id');
  t.members.forEach((m, i) => {
    const mat = `${at}/members/${i}`;
    memberOnce(m.user_id, mat);
    if (!users.has(m.user_id)) problems.push(`${mat}: unknown user_id "${m.user_id}"`);
    for (const name of m.tenant_roles) if (!tenantRoles.has(name)) problems.push(`${mat}: unknown tenant role "${name}"`);
    for (const [appId, entry] of Object.entries(m.applications)) {
      if (!apps.has(appId)) {
        problems.push(`${mat}: unknown application_id "${appId}"`);
        continue;
      }
      const known = appRolesFor(appId);
      for (const name of entry.roles) if (!known.has(name)) problems.push(`${mat}: unknown role "${name}" for application "${appId}"`);
    }
  });
}

/** Application roles with application_id null are shared by every application of the tenant. */
export function appliesTo(role: FixtureRole, applicationId: string): boolean {
  return role.role_scope === 'application' && (role.application_id === null || role.application_id === applicationId);
}
