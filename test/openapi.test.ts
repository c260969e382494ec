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
