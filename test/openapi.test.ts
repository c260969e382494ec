/** The published contract: derived from the route table, checked in, valid OpenAPI 3.1. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiText, buildOpenApi } from '../src/api/openapi.ts';
import { ROUTES } from '../src/api/routes/index.ts';
import { ERROR_CODES } from '../src/errors/catalog.ts';

const FILE = path.resolve(import.meta.dirname, '../schema/openapi.json');

test('schema/openapi.json is up to date with the route table (run `npm run openapi`)', () => {
  assert.equal(fs.readFileSync(FILE, 'utf8'), openApiText(ROUTES), 'schema/openapi.json is stale: run `npm run openapi` and commit it');
});

test('the document is valid OpenAPI 3.1', async () => {
  const validator = new Validator();
  const res = await validator.validate(JSON.parse(fs.readFileSync(FILE, 'utf8')) as Parameters<Validator["validate"]>[0]);
  assert.equal(res.valid, true, JSON.stringify(res.errors, null, 2));
  assert.equal(validator.version, '3.1');
});

test('every operation carries the x- extensions the contract names', () => {
  const doc = buildOpenApi(ROUTES) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  let count = 0;
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      count++;
      const where = `${method.toUpperCase()} ${p}`;
      assert.ok(Array.isArray(op['x-audience']) && (op['x-audience'] as string[]).length > 0, `${where} x-audience`);
      assert.equal(typeof op['x-required-scopes'], 'object', `${where} x-required-scopes`);
      const codes = op['x-error-codes'] as string[];
      assert.ok(Array.isArray(codes) && codes.length > 0, `${where} x-error-codes`);
      for (const c of codes) assert.ok((ERROR_CODES as string[]).includes(c), `${where}: ${c} is in the catalog`);
      const caps = op['x-required-capabilities'] as Record<string, unknown> | undefined;
      if (caps) assert.ok('all' in caps || 'any' in caps, `${where} x-required-capabilities shape`);
      if (!(op['x-audience'] as string[]).includes('public')) {
        for (const c of ['invalid_token', 'token_revoked', 'rate_limited', 'identity_unavailable']) assert.ok(codes.includes(c), `${where} lists ${c}`);
      }
    }
  }
  assert.equal(count, ROUTES.length);
});

/**
 * The contract's error list of every operation it details (Endpoints section), transcribed: each
 * must be in the operation's x-error-codes. Groups as the contract names them.
 */
const E401 = ['invalid_token', 'token_revoked'];
const E403A = ['not_tenant_member', 'no_application_access', 'tenant_not_available', 'insufficient_scope', 'client_context_mismatch'];
const E429 = ['rate_limited'];
const E503 = ['identity_unavailable'];
const A = '/tenants/{tenant_id}/applications/{application_id}';
const C = `${A}/conversations/{conversation_id}`;
const common = [...E401, ...E403A, ...E429, ...E503];
const CONTRACT_ERRORS: Record<string, string[]> = {
  'GET /notifications/vapid-public-key': [],
  'GET /tenants/{tenant_id}/presence': [...common, 'principal_not_allowed'],
  [`GET ${A}/conversations`]: [...common, 'invalid_request', 'invalid_cursor', 'invalid_limit', 'missing_capability', 'application_not_found'],
  [`POST ${A}/conversations`]: [...common, 'invalid_request', 'missing_capability', 'application_not_found', 'target_user_not_eligible'],
  [`DELETE ${C}`]: [...common, 'missing_capability', 'principal_not_allowed', 'application_not_found', 'not_found'],
  [`GET ${C}/messages`]: [...common, 'invalid_cursor', 'invalid_limit', 'missing_capability', 'not_conversation_member', 'application_not_found', 'not_found'],
  [`POST ${C}/messages`]: [...common, 'invalid_request', 'body_too_long', 'too_many_attachments', 'missing_capability', 'not_conversation_member', 'system_message_not_allowed', 'application_not_found', 'not_found', 'conversation_archived', 'invalid_reply', 'actor_not_member', 'target_user_not_eligible'],
  [`PATCH ${C}/messages/{message_id}`]: [...common, 'invalid_request', 'body_too_long', 'missing_capability', 'principal_not_allowed', 'application_not_found', 'not_found'],
  [`DELETE ${C}/messages/{message_id}`]: [...common, 'missing_capability', 'principal_not_allowed', 'application_not_found', 'not_found'],
  [`GET ${C}/members`]: [...common, 'invalid_cursor', 'invalid_limit', 'missing_capability', 'application_not_found', 'not_found'],
  [`POST ${C}/members`]: [...common, 'invalid_request', 'application_not_found', 'not_found', 'target_user_not_eligible'],
  [`DELETE ${C}/members/{user_id}`]: [...common, 'application_not_found', 'not_found'],
  'DELETE /tenants/{tenant_id}/admin/conversations/{conversation_id}/members/{user_id}': [...common, 'missing_capability', 'principal_not_allowed', 'not_found'],
  [`GET ${A}/notifications/realtime-token`]: [...common, 'principal_not_allowed', 'application_not_found'],
  'POST /tenants/{tenant_id}/notifications/push/devices': [...common, 'invalid_request', 'principal_not_allowed'],
  'DELETE /tenants/{tenant_id}/notifications/push/devices': [...common, 'principal_not_allowed'],
  'GET /me/tenants': [...common, 'principal_not_allowed'],
  'GET /tenants/{tenant_id}/me/capabilities': common,
  'GET /tenants/{tenant_id}/admin/applications': [...common, 'missing_capability', 'principal_not_allowed'],
  'GET /tenants/{tenant_id}/admin/overview': [...common, 'missing_capability', 'principal_not_allowed'],
  'GET /tenants/{tenant_id}/admin/role-permissions': [...common, 'missing_capability', 'principal_not_allowed'],
  'PATCH /tenants/{tenant_id}/admin/settings': [...common, 'invalid_request', 'missing_capability', 'principal_not_allowed'],
};

test("x-error-codes hold the contract's list of every operation it details (E403a whole)", () => {
  const doc = buildOpenApi(ROUTES) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  for (const [op, expected] of Object.entries(CONTRACT_ERRORS)) {
    const [method, p] = op.split(' ') as [string, string];
    const codes = doc.paths[p]?.[method.toLowerCase()]?.['x-error-codes'] as string[] | undefined;
    assert.ok(codes, `${op} is in the document`);
    const missing = expected.filter((c) => !codes.includes(c));
    assert.deepEqual(missing, [], `${op} lacks ${missing.join(', ')}`);
  }
});

test('only the VAPID key route is public; the document itself is no operation', () => {
  const doc = buildOpenApi(ROUTES) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const publicOps: string[] = [];
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if ((op['x-audience'] as string[]).includes('public')) publicOps.push(`${method.toUpperCase()} ${p}`);
      if ((op['x-audience'] as string[]).includes('public')) assert.deepEqual(op.security, [], `${p}: no security`);
      else assert.deepEqual(op.security, [{ bearer: [] }], `${p}: bearer`);
    }
  }
  assert.deepEqual(publicOps, ['GET /notifications/vapid-public-key']);
  assert.equal(doc.paths['/openapi.json'], undefined);
});
