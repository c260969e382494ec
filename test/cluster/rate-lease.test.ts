/**
 * Rate-limit leases through chat nodes (docs/authorization.md "Leases"): two node processes on
 * one Redis with the default leases, a per-user send limit low enough to reach. A user sending
 * as fast as they can through both nodes is held to the limit (never above it, and refused no
 * earlier than the quarter the leases may hold back), every refusal is the contract's 429, and
 * the answers show the leases at work (each node's `r=` falls, but not one by one).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { bearer, request } from '../helpers/http.ts';
import { machineToken, userToken } from '../helpers/tokens.ts';

let cluster: TestCluster;
const tok: Record<string, string> = {};
const BASE = '/tenants/acme/applications/support';
const LIMIT = 40;

before(async () => {
  // A window of 10 minutes: the test's sends all fall in one window (or, once in 600 runs, two).
  cluster = await startCluster({ nodes: 2, env: { CHAT_RATE_SEND: `${LIMIT}/600s`, CHAT_RATE_CLIENT: '1000000/60s' } });
  tok.machine = await machineToken(cluster.idp.url);
  tok.bob = await userToken(cluster.idp.url, 'bob');
});
after(async () => {
  await cluster?.stop();
});

describe('rate-limit leases: chat nodes', () => {
  test('a user sending fast through two nodes is held to the send limit; refusals are 429 rate_limited', { timeout: 60_000 }, async () => {
    const created = await request(`${cluster.node(0).api}${BASE}/conversations`, {
      method: 'POST',
      headers: Object.assign(bearer(tok.machine!), { 'Content-Type': 'application/json' }),
      body: JSON.stringify({ type: 'GROUP', name: `g-${crypto.randomUUID().slice(0, 6)}`, member_user_ids: ['alice', 'bob'] }),
    });
    assert.equal(created.status, 201, created.text);
    const id = created.json().conversation_id as string;

    const answers: Array<{ node: number; status: number; r: number | null }> = [];
    for (let k = 0; k < 60; k += 1) {
      const node = k % 2;
      const res = await request(`${cluster.node(node).api}${BASE}/conversations/${id}/messages`, {
        method: 'POST',
        headers: Object.assign(bearer(tok.bob!), { 'Content-Type': 'application/json' }),
        body: JSON.stringify({ body: `fast ${k}` }),
      });
      assert.equal(String(res.headers['ratelimit-policy']), `"send";q=${LIMIT};w=600`);
      const r = /r=(\d+)/.exec(String(res.headers.ratelimit ?? ''));
      if (res.status === 429) {
        assert.equal(res.json().error, 'rate_limited', res.text);
        assert.equal(res.json().status_code, 429);
        assert.ok(Number(res.headers['retry-after']) >= 1, `Retry-After: ${String(res.headers['retry-after'])}`);
      } else {
        assert.equal(res.status, 201, res.text);
      }
      answers.push({ node, status: res.status, r: r ? Number(r[1]) : null });
    }

    const admitted = answers.filter((a) => a.status === 201).length;
    assert.ok(admitted <= LIMIT, `admitted ${admitted} of a limit of ${LIMIT}`);
    assert.ok(admitted >= LIMIT * 0.75, `admitted ${admitted}: leases hold back at most a quarter`);
    const firstRefusal = answers.findIndex((a) => a.status === 429);
    assert.ok(firstRefusal >= LIMIT * 0.75, `first refusal at send ${firstRefusal}`);

    // The leases at work: each node's figure falls with every send it answers, faster than its
    // own sends (the other node's count with it), and not one by one overall as without leases.
    for (const node of [0, 1]) {
      const own = answers.filter((a) => a.node === node && a.status === 201).map((a) => a.r!);
      for (let i = 1; i < own.length; i += 1) assert.ok(own[i]! < own[i - 1]!, `node ${node}: ${own.join(', ')}`);
    }
    const all = answers.filter((a) => a.status === 201).map((a) => a.r!);
    assert.notDeepEqual(all, all.map((_, i) => LIMIT - 1 - i), 'with leases a node answers its own view, not the exact count');

    // What Redis counted for bob: every admitted send, never above the limit.
    const redis = new Redis(cluster.redis!.url);
    try {
      const [key] = await redis.keys('*rl:send:bob');
      assert.ok(key, 'the send limit key of bob');
      const counted = Number(await redis.hget(key, 'c'));
      assert.ok(counted >= admitted && counted <= LIMIT, `counted ${counted}, admitted ${admitted}`);
    } finally {
      redis.disconnect();
    }
  });
});
