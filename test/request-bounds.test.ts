/**
 * Bounded request input: every integer and number a request may carry has a minimum and a maximum
 * within JavaScript's safe integers (a larger JSON number reached the stores and came back as a
 * 500), proven over the whole route table and over HTTP on the fields that had none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { ROUTES } from '../src/api/routes/index.ts';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

type Schema = TSchema & Record<string, unknown>;

/** 2^53 - 1: above it a JSON integer is no longer exact in JavaScript. */
const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** Every integer or number node of a schema, with where it is. */
function numbers(s: unknown, where: string, out: Array<{ where: string; schema: Schema }>): void {
  if (typeof s !== 'object' || s === null) return;
  const schema = s as Schema;
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types.includes('integer') || types.includes('number')) out.push({ where, schema });
  for (const [name, sub] of Object.entries((schema.properties as Record<string, unknown> | undefined) ?? {})) numbers(sub, `${where}.${name}`, out);
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) for (const sub of (schema[k] as unknown[] | undefined) ?? []) numbers(sub, where, out);
  if (schema.items !== undefined) numbers(schema.items, `${where}[]`, out);
  if (typeof schema.additionalProperties === 'object') numbers(schema.additionalProperties, `${where}{}`, out);
}

test('every integer and number of every request schema is bounded on both sides within safe integers', () => {
  const found: Array<{ where: string; schema: Schema }> = [];
  for (const r of ROUTES) for (const part of ['params', 'query', 'body'] as const) numbers(r.schemas[part], `${r.method} ${r.path} ${part}`, found);
  assert.ok(found.length >= 4, 'the walk finds the known numeric fields');
  const unbounded = found.filter(({ schema }) => {
    const min = (schema.minimum ?? schema.exclusiveMinimum) as number | undefined;
    const max = (schema.maximum ?? schema.exclusiveMaximum) as number | undefined;
    return min === undefined || max === undefined || max > MAX_INTEGER || min < -MAX_INTEGER;
  });
  assert.deepEqual(unbounded.map((u) => u.where), []);
});

describe('over HTTP', () => {
  let node: TestNode;
  let bob = '';
  const base = () => `${node.api}/tenants/acme/applications/support`;
  // Raw JSON text: JSON.stringify cannot write 2^64 as the integer a client would send.
  const post = (path: string, token: string, raw: string): Promise<Res> =>
    request(`${base()}${path}`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json' }, body: raw });

  before(async () => {
    node = await startTestNode();
    bob = await userToken(node.idp, 'bob');
  });
  after(() => node.stop());

  test('mark-read with a seq above 2^53 is invalid_request (it was a 500), and the node keeps serving', async () => {
    const created = await post('/conversations', bob, JSON.stringify({ type: 'GROUP', name: 'bounds', member_user_ids: ['frank'] }));
    assert.equal(created.status, 201, created.text);
    const id = created.json().conversation_id as string;
    assert.equal((await post(`/conversations/${id}/messages`, bob, '{"body":"one"}')).status, 201);
    for (const seq of ['18446744073709551616', '9007199254740992', '1e300']) {
      const res = await post(`/conversations/${id}/read`, bob, `{"seq": ${seq}}`);
      const body = assertErrorBody(res, 400, 'invalid_request');
      assert.ok((body.message as string[]).some((m) => m.startsWith('body.seq')), res.text);
    }
    const ok = await post(`/conversations/${id}/read`, bob, `{"seq": ${MAX_INTEGER}}`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().unread_count, 0);
  });

  test('an attachment size above 2^53 is invalid_request', async () => {
    const created = await post('/conversations', bob, JSON.stringify({ type: 'GROUP', name: 'sizes', member_user_ids: ['frank'] }));
    const id = created.json().conversation_id as string;
    const res = await post(`/conversations/${id}/messages`, bob, '{"body":"f","attachments":[{"file_id":"f1","name":"a.txt","mime_type":"text/plain","size":18446744073709551616}]}');
    const body = assertErrorBody(res, 400, 'invalid_request');
    assert.ok((body.message as string[]).some((m) => m.startsWith('body.attachments.0.size')), res.text);
  });

  test('a push subscription expirationTime outside 0..2^53-1 is invalid_request', async () => {
    const res = await request(`${node.api}/tenants/acme/notifications/push/devices`, {
      method: 'POST',
      headers: { ...bearer(bob), 'Content-Type': 'application/json' },
      body: '{"platform":"web","subscription":{"endpoint":"https://push.example.com/x","expirationTime":1e300,"keys":{"p256dh":"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM","auth":"tBHItJI5svbpez7KI4CCXg"}}}',
    });
    assertErrorBody(res, 400, 'invalid_request');
  });
});
