/**
 * Identity directory driver `http`: an IdP reached over HTTP (the standalone development IdP, or
 * a team's adapter in front of their real IdP; contract in docs/identity-provider.md).
 *
 * - `init()` reads `{url}/.well-known/openid-configuration` for the issuer, the JWKS URL and the
 *   directory base (`chat_directory_endpoint`, default `{url}/directory`). Other calls discover
 *   on first use too; a failed discovery is retried on the next call.
 * - Every request carries `Authorization: Bearer <directory key>` and an AbortSignal timeout
 *   covering the whole exchange, body included. Connections are kept alive (undici's default).
 * - Network errors, timeouts, 5xx, unexpected statuses, unparseable or wrongly shaped bodies:
 *   `IdentityUnavailableError`. A 404 whose JSON `error` ends in `_not_found` is a "not found"
 *   answer (null / empty) where the shape has one; any other 404 (a wrong URL, a proxy page) is a
 *   misconfiguration and also `IdentityUnavailableError`, never silently "nobody exists".
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import {
  ApplicationRecordSchema,
  CapabilityDefSchema,
  ContextAnswerSchema,
  DiscoverySchema,
  itemsOf,
  JwksSchema,
  RevocationPageSchema,
  RoleRecordSchema,
  TenantRecordSchema,
  UserProfileSchema,
} from './http-directory-schemas.ts';
import {
  IdentityUnavailableError,
  type ApplicationRecord,
  type CapabilityDef,
  type ContextAnswer,
  type ContextQuery,
  type IdentityDirectory,
  type RevocationPage,
  type RoleRecord,
  type TenantRecord,
  type UserProfile,
} from './types.ts';

export interface HttpIdentityDirectoryOptions {
  /** The IdP's base URL (its issuer URL, normally); discovery is read below it. */
  url: string;
  /** Bearer key for the directory endpoints. */
  directoryKey: string;
  /** Per request, including reading the body. */
  timeoutMs: number;
}

/** The most user ids sent in one profiles request (the IdP's limit). */
const PROFILE_BATCH = 500;

const ajv = new Ajv({ allErrors: false, strict: false });
const validator = <T extends TSchema>(schema: T): ValidateFunction<Static<T>> => ajv.compile<Static<T>>(schema);
const check = {
  discovery: validator(DiscoverySchema),
  jwks: validator(JwksSchema),
  context: validator(ContextAnswerSchema),
  tenants: validator(itemsOf(TenantRecordSchema)),
  applications: validator(itemsOf(ApplicationRecordSchema)),
  roles: validator(itemsOf(RoleRecordSchema)),
  capabilities: validator(itemsOf(CapabilityDefSchema)),
  profiles: validator(itemsOf(UserProfileSchema)),
  revocations: validator(RevocationPageSchema),
};

const NOT_FOUND = Symbol('not found');

interface Discovered {
  issuer: string;
  jwksUri: string;
  directory: string;
}

export class HttpIdentityDirectory implements IdentityDirectory {
  readonly driver = 'http' as const;
  private readonly base: string;
  private discovered: Discovered | null = null;
  private discovering: Promise<Discovered> | null = null;
  /** Aborts every request in flight on close(). */
  private readonly closing = new AbortController();

  constructor(private readonly options: HttpIdentityDirectoryOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  /** Reads the discovery document; throws IdentityUnavailableError when the IdP cannot tell. */
  async init(): Promise<void> {
    await this.discover();
  }

  issuer(): string {
    if (!this.discovered) throw new IdentityUnavailableError('the identity provider has not been discovered yet (call init() first)');
    return this.discovered.issuer;
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    const d = await this.discover();
    return this.required(await this.get(d.jwksUri, check.jwks, false), 'JWKS');
  }

  async context(q: ContextQuery): Promise<ContextAnswer> {
    const query = new URLSearchParams({ tenant_id: q.tenant_id });
    if (q.application_id !== undefined) query.set('application_id', q.application_id);
    if (q.user_id !== undefined) query.set('user_id', q.user_id);
    const answer = await this.directory(`/context?${query}`, check.context);
    return answer === NOT_FOUND ? { tenant: null, application: null, member: null } : answer;
  }

  async userTenants(userId: string): Promise<TenantRecord[]> {
    return this.items(await this.directory(`/users/${enc(userId)}/tenants`, check.tenants));
  }

  async applications(tenantId: string): Promise<ApplicationRecord[]> {
    return this.items(await this.directory(`/tenants/${enc(tenantId)}/applications`, check.applications));
  }

  async roles(tenantId: string, applicationId: string | null): Promise<RoleRecord[]> {
    const query = applicationId === null ? '' : `?${new URLSearchParams({ application_id: applicationId })}`;
    return this.items(await this.directory(`/tenants/${enc(tenantId)}/roles${query}`, check.roles));
  }

  async capabilityCatalog(): Promise<CapabilityDef[]> {
    return this.required(await this.directory('/capabilities', check.capabilities), 'capability catalog').items;
  }

  /** Ids travel comma-separated, so an id containing a comma cannot be asked about. */
  async profiles(tenantId: string, userIds: string[]): Promise<UserProfile[]> {
    const ids = [...new Set(userIds)];
    const out: UserProfile[] = [];
    for (let i = 0; i < ids.length; i += PROFILE_BATCH) {
      const query = new URLSearchParams({ user_ids: ids.slice(i, i + PROFILE_BATCH).join(',') });
      out.push(...this.items(await this.directory(`/tenants/${enc(tenantId)}/profiles?${query}`, check.profiles)));
    }
    return out;
  }

  async revocations(after: string | null): Promise<RevocationPage> {
    const query = after === null ? '' : `?${new URLSearchParams({ after })}`;
    return this.required(await this.directory(`/revocations${query}`, check.revocations), 'revocation list');
  }

  async close(): Promise<void> {
    this.closing.abort(new IdentityUnavailableError('the identity directory is closed'));
  }

  private discover(): Promise<Discovered> {
    if (this.discovered) return Promise.resolve(this.discovered);
    this.discovering ??= (async () => {
      const doc = this.required(await this.get(`${this.base}/.well-known/openid-configuration`, check.discovery, false), 'discovery document');
      // The issuer is the IdP's URL as clients reach it (a load balancer's, say); the node reaches
      // the IdP at CHAT_IDP_URL. Endpoints under the issuer are called there.
      const issuer = doc.issuer.replace(/\/+$/, '');
      const direct = (url: string): string => (url.startsWith(`${issuer}/`) ? `${this.base}${url.slice(issuer.length)}` : url);
      this.discovered = {
        issuer: doc.issuer,
        jwksUri: direct(doc.jwks_uri),
        directory: direct(doc.chat_directory_endpoint ?? `${this.base}/directory`).replace(/\/+$/, ''),
      };
      return this.discovered;
    })().finally(() => {
      this.discovering = null;
    });
    return this.discovering;
  }

  private async directory<T>(path: string, validate: ValidateFunction<T>): Promise<T | typeof NOT_FOUND> {
    const d = await this.discover();
    return this.get(`${d.directory}${path}`, validate, true);
  }

  private items<T>(answer: { items: T[] } | typeof NOT_FOUND): T[] {
    return answer === NOT_FOUND ? [] : answer.items;
  }

  private required<T>(answer: T | typeof NOT_FOUND, what: string): T {
    if (answer === NOT_FOUND) throw new IdentityUnavailableError(`the identity provider has no ${what} (404)`);
    return answer;
  }

  private async get<T>(url: string, validate: ValidateFunction<T>, withKey: boolean): Promise<T | typeof NOT_FOUND> {
    if (this.closing.signal.aborted) throw new IdentityUnavailableError('the identity directory is closed');
    const signal = AbortSignal.any([this.closing.signal, AbortSignal.timeout(this.options.timeoutMs)]);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (withKey) headers.authorization = `Bearer ${this.options.directoryKey}`;
    let status: number;
    let text: string;
    try {
      const res = await fetch(url, { headers, signal });
      status = res.status;
      text = await res.text();
    } catch (err) {
      throw new IdentityUnavailableError(`identity provider request ${redact(url)} failed: ${reason(err, this.options.timeoutMs)}`, { cause: err });
    }
    const body = parseJson(text);
    if (status === 404 && isNotFoundBody(body)) return NOT_FOUND;
    if (status !== 200) {
      const hint = status === 401 || status === 403 ? ' (is the directory key right?)' : '';
      throw new IdentityUnavailableError(`identity provider answered ${status} to ${redact(url)}${hint}`);
    }
    if (body === undefined) throw new IdentityUnavailableError(`identity provider answered ${redact(url)} with a body that is not JSON`);
    if (!validate(body)) {
      const first = validate.errors?.[0];
      const where = first ? `${first.instancePath || '(root)'} ${first.message ?? ''}` : 'unknown problem';
      throw new IdentityUnavailableError(`identity provider answered ${redact(url)} with an unexpected shape: ${where}`);
    }
    return body;
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isNotFoundBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  return typeof body.error === 'string' && body.error.endsWith('_not_found');
}

/** Query strings may carry user ids; logs and errors get the path only. */
function redact(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function reason(err: unknown, timeoutMs: number): string {
  if (err instanceof IdentityUnavailableError) return err.message;
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err instanceof Error ? err.message : String(err)}${cause}`;
}
