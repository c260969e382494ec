/**
 * The per-client rate limit of backend (machine) clients, through a node configured with a small
 * limit (CHAT_RATE_CLIENT=5/60s): RateLimit headers on every answer, `rate_limited` (429) with
 * Retry-After past the limit, one budget per client, and users outside it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

const LIMIT = 5;
const WINDOW = 60;
const ACME_CAPS = '/tenants/acme/applications/support/me/capabilities';
const GLOBEX_CAPS = '/tenants/globex/applications/portal/me/capabilities';

let node: TestNode;

before(async () => {
  node = await startTestNode({ CHAT_RATE_CLIENT: `${LIMIT}/${WINDOW}s` });
});
after(async () => {
  await node.stop();
  fs.rmSync(node.dataDir, { recursive: true, force: true });
});

const get = (path: string, token: string, headers: Record<string, string> = {}) => request(`${node.api}${path}`, { headers: { ...bearer(token), ...headers } });

/** `RateLimit: "client";r=<remaining>;t=<reset>` and `RateLimit-Policy: "client";q=<limit>;w=<window>`. */
function rateHeaders(res: Res): { remaining: number; reset: number } {
  assert.equal(res.headers['ratelimit-policy'], `"client";q=${LIMIT};w=${WINDOW}`);
  const m = /^"client";r=(\d+);t=(\d+)$/.exec(String(res.headers.ratelimit));
  assert.ok(m, `RateLimit: ${String(res.headers.ratelimit)}`);
  const reset = Number(m[2]);
  assert.ok(reset >= 1 && reset <= 2 * WINDOW, `reset ${reset}`);
  return { remaining: Number(m[1]), reset };
}

describe('per-client rate limit', () => {
  test('a machine client gets its limit with RateLimit headers, then rate_limited with Retry-After', async () => {
    const token = await machineToken(node.idp, 'acme-support-backend');
    const remaining: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await get(ACME_CAPS, token);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['retry-after'], undefined);
      remaining.push(rateHeaders(res).remaining);
    }
    assert.deepEqual(remaining, [4, 3, 2, 1, 0]);

    const refused = await get(ACME_CAPS, token, { Origin: 'http://localhost:3000' });
    assertErrorBody(refused, 429, 'rate_limited', `/api/v1${ACME_CAPS}`);
    const retryAfter = String(refused.headers['retry-after']);
    assert.match(retryAfter, /^[1-9]\d*$/, `Retry-After: ${retryAfter}`);
    assert.ok(Number(retryAfter) <= 2 * WINDOW);
    assert.equal(rateHeaders(refused).remaining, 0);
    // A browser could read it: the 429 carries the CORS headers exposing Retry-After.
    assert.equal(refused.headers['access-control-allow-origin'], 'http://localhost:3000');
    assert.match(String(refused.headers['access-control-expose-headers']), /Retry-After/);

    // Refused hits are not counted, and a fresh token of the same client shares the budget.
    assertErrorBody(await get(ACME_CAPS, token), 429, 'rate_limited');
    assertErrorBody(await get(ACME_CAPS, await machineToken(node.idp, 'acme-support-backend')), 429, 'rate_limited');
  });

  test('another machine client has its own budget', async () => {
    const res = await get(GLOBEX_CAPS, await machineToken(node.idp, 'globex-portal-backend'));
    assert.equal(res.status, 200, res.text);
    assert.equal(rateHeaders(res).remaining, LIMIT - 1);
  });

  test('users are not subject to the per-client limit', async () => {
    const token = await userToken(node.idp, 'bob');
    for (let i = 0; i < 4 * LIMIT; i++) {
      const res = await get(ACME_CAPS, token);
      assert.equal(res.status, 200, `call ${i + 1}: ${res.text}`);
      assert.equal(res.headers.ratelimit, undefined);
      assert.equal(res.headers['ratelimit-policy'], undefined);
    }
  });

  test('refusals are counted in chat_rate_limited_total by policy', async () => {
    const text = await (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
    const m = /^chat_rate_limited_total\{policy="client"\} (\d+)$/m.exec(text);
    assert.ok(m, 'chat_rate_limited_total{policy="client"} is exported');
    assert.equal(Number(m[1]), 3);
  });
});
