/**
 * The OpenAPI 3.1 document, derived from the route table. Served at GET /openapi.json beside
 * /healthz (an operational endpoint, not an operation of the API: src/http/operational.ts) and
 * checked in as schema/openapi.json (`npm run openapi` rewrites it; a test fails when stale).
 */
import type { TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../errors/catalog.ts';
import { routeErrorCodes } from './errors.ts';
import { bodyOptional, type AnyRoute } from './route.ts';
import { ErrorBody } from './schemas/common.ts';

type Json = Record<string, unknown>;

/** A plain JSON copy of a TypeBox schema (drops its symbol keys and our $id markers). */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema, (k, v: unknown) => (k === '$id' ? undefined : v))) as Json;
}

function parameters(route: AnyRoute): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [['path', route.schemas.params], ['query', route.schemas.query]] as const) {
    if (!schema) continue;
    const s = plain(schema);
    const props = (s.properties ?? {}) as Record<string, Json>;
    const required = new Set((s.required ?? []) as string[]);
    for (const [name, p] of Object.entries(props)) {
      const { description, ...rest } = p;
      out.push({ name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  return out;
}

function errorResponses(codes: ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const st = ERROR_STATUS[c];
    byStatus.set(st, [...(byStatus.get(st) ?? []), c]);
  }
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: `Error: ${list.join(', ')}`,
      ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } } } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    };
  }
  return out;
}

export function buildOpenApi(routes: readonly AnyRoute[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of routes) {
    const codes = routeErrorCodes(r);
    const isPublic = r.audience.includes('public');
    const op: Json = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      security: isPublic ? [] : [{ bearer: [] }],
      parameters: parameters(r),
      ...(r.schemas.body
        ? { requestBody: { required: !bodyOptional(r.schemas.body), content: { 'application/json': { schema: plain(r.schemas.body) } } } }
        : {}),
      responses: {
        [String(r.status)]: r.schemas.response
          ? { description: 'Success', content: { 'application/json': { schema: plain(r.schemas.response) } } }
          : { description: 'Success, no body' },
        ...errorResponses(codes),
      },
      'x-audience': r.audience,
      'x-required-scopes': isPublic ? {} : requiredScopes(r),
      ...(r.capabilities ? { 'x-required-capabilities': r.capabilities } : {}),
      'x-error-codes': codes,
      'x-cors': r.cors,
      ...(r.rateLimit ? { 'x-rate-limit': r.rateLimit } : {}),
    };
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Chat Service API',
      version: '1.0.0',
      description:
        'Multi-tenant chat service. Every error uses the ErrorBody shape; clients branch on `error`. Extensions per operation: x-audience, x-required-scopes, x-required-capabilities, x-error-codes, x-cors.',
    },
    servers: [{ url: '/api/v1' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { ErrorBody: plain(ErrorBody) },
    },
  };
}

export function openApiText(routes: readonly AnyRoute[]): string {
  return `${JSON.stringify(buildOpenApi(routes), null, 2)}\n`;
}

/** The scopes a route asks for, per audience (only the audiences it serves). */
function requiredScopes(r: AnyRoute): { user?: readonly string[]; machine?: readonly string[] } {
  const out: { user?: readonly string[]; machine?: readonly string[] } = {};
  if (r.scopes.user || r.audience.includes('user')) out.user = r.scopes.user ?? ['chat:access'];
  if (r.scopes.machine) out.machine = r.scopes.machine;
  return out;
}
