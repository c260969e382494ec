/**
 * The route table's vocabulary. An operation is one `RouteDef`: data the router, the validator,
 * the authorizer, the CORS policy and the OpenAPI document are all derived from. Adding an
 * operation means adding one declaration (with its handler) to a file under src/api/routes/.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../errors/catalog.ts';
import type { Principal } from '../identity/types.ts';
import type { AccessContext } from '../identity/access.ts';
import type { Logger } from '../log/index.ts';
import type { Services } from './services.ts';

export type { Audience, CapabilityRule, ContextKind } from '../identity/access.ts';
import type { Audience, CapabilityRule, ContextKind } from '../identity/access.ts';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Browser access, as the contract's CORS section says:
 * - application: origins registered on the application's client
 * - tenant: origins registered on any application client of the tenant (presence, push devices)
 * - public-read: any origin, GET only (the VAPID key)
 * - none: the service's own web app only (account, tenant list, capabilities, administration)
 */
export type CorsPolicy = 'application' | 'tenant' | 'public-read' | 'none';

export interface RouteSchemas {
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /** The success response body; absent for 204. */
  response?: TSchema;
}

type StaticOr<T, F> = T extends TSchema ? Static<T> : F;

export interface HandlerInput<S extends RouteSchemas> {
  params: StaticOr<S['params'], Record<string, never>>;
  query: StaticOr<S['query'], Record<string, never>>;
  body: StaticOr<S['body'], undefined>;
  /** null only on public routes. */
  principal: Principal | null;
  /** What the identity provider said about the caller in this context (null on public routes). */
  access: AccessContext | null;
  requestId: string;
  log: Logger;
  /** Request headers the edge keeps (lower-case names), read before any await. */
  headers: Readonly<Record<string, string>>;
  services: Services;
  /**
   * Under an Idempotency-Key: the id to give what this request creates, the same in every run of
   * the key (a re-run after a crash then finds it stored instead of creating a second one;
   * http/idempotency.ts). null without a key.
   */
  idempotentId: (() => string) | null;
}

/**
 * A body already serialized as JSON (a cached page): sent as is with the route's status. Only
 * for bodies the handler built from the same schema-typed values it would otherwise return.
 */
export class RawJson {
  constructor(readonly bytes: Buffer) {}
}

/** A handler may return the body (sent with `status`), a `RawJson` body, or a full `Reply`. */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
    readonly headers: Record<string, string> = {},
  ) {}
}

export interface RouteDef<S extends RouteSchemas = RouteSchemas> {
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  method: Method;
  /** OpenAPI-style template relative to the API prefix, e.g. `/tenants/{tenant_id}/me/capabilities`. */
  path: string;
  audience: Audience[];
  /** Scopes per audience; a token needs any one of the listed scopes. */
  scopes: { user?: string[]; machine?: string[] };
  /** Capabilities a user must hold (machines: granted by their scopes). Absent: membership is enough. */
  capabilities?: CapabilityRule;
  /** Error code a machine gets on a user-only route. */
  machineRefusal?: 'principal_not_allowed' | 'user_required';
  context: ContextKind;
  cors: CorsPolicy;
  schemas: S;
  status: 200 | 201 | 204;
  /** Route-specific error codes; the generic ones are derived from the declaration (errors.ts). */
  errors: ErrorCode[];
  /** Request headers the handler reads (lower-case), e.g. `idempotency-key`; others are not read. */
  headers?: string[];
  /** Extra per-user rate limit rule applied to this operation. */
  rateLimit?: 'send' | 'lookup';
  /** Method syntax on purpose: lets a RouteDef<S> be stored as an AnyRoute. */
  handler(input: HandlerInput<S>): Promise<unknown> | unknown;
}

/** Identity function that keeps the handler's input typed from the schemas. */
export function defineRoute<S extends RouteSchemas>(def: RouteDef<S>): RouteDef<S> {
  return def;
}

/**
 * Every field of the body is optional: the edge then takes a request with no body at all (and no
 * Content-Type) as `{}`, and the OpenAPI document marks the request body as not required.
 */
export function bodyOptional(body: TSchema | undefined): boolean {
  return body !== undefined && ((body.required as string[] | undefined) ?? []).length === 0;
}

/** The erased form the router stores. */
export type AnyRoute = RouteDef<RouteSchemas>;
