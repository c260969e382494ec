/** Membership against a real redis-server: join, crash detection within the bound, leave, rejoin, outage. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Membership } from '../../src/sharding/membership.ts';
import { startTestRedis, useTestRedis } from '../helpers/redis.ts';
import { factoryFor, prefix, redisOnPort, until } from './helpers.ts';

const HEARTBEAT_MS = 100;
const TTL_MS = 400;

const testRedis = useTestRedis();

function member(keyPrefix: string, nodeId: string, url = testRedis().url): Membership {
  return new Membership({ redis: factoryFor(url), keyPrefix, nodeId, internalUrl: `http://127.0.0.1:1/${nodeId}`, heartbeatMs: HEARTBEAT_MS, ttlMs: TTL_MS });
}

const ids = (m: Membership): string[] => m.view.nodes.map((n) => n.nodeId);

test('nodes see each other; a crashed node leaves every view within ttl + heartbeat; a graceful leave is seen at once; a restart rejoins', async () => {
  const p = prefix();
  const [a, b, c] = [member(p, 'a'), member(p, 'b'), member(p, 'c')];
  const open = [a, b, c];
  try {
    for (const m of open) await m.start();
    await until('all three see all three', () => open.every((m) => ids(m).join() === 'a,b,c'), 2000);
    assert.equal(a.detectionBoundMs, TTL_MS + HEARTBEAT_MS);

    // c crashes: it stops beating without telling anyone.
    const crashedAt = Date.now();
    await c.close();
    const waited = await until('a and b drop c', () => ids(a).join() === 'a,b' && ids(b).join() === 'a,b', 5000);
    // The bound, plus slack for two busy shared cores and Redis round trips.
    assert.ok(Date.now() - crashedAt <= a.detectionBoundMs + 1000, `c was dropped after ${Date.now() - crashedAt} ms (waited ${waited})`);

    // b leaves gracefully: a sees it through the notice, long before any TTL could expire it.
    const changes: string[][] = [];
    a.onChange((ch) => changes.push([...ch.left]));
    const leftAt = Date.now();
    await b.leave();
    await until('a drops b', () => ids(a).join() === 'a', 2000);
    assert.ok(Date.now() - leftAt < TTL_MS, `the leave took ${Date.now() - leftAt} ms to be seen`);
    assert.deepEqual(changes.at(-1), ['b']);
    await b.close();

    // c restarts under the same id: it rejoins, as a new instance.
    const c2 = member(p, 'c');
    open.push(c2);
    await c2.start();
    await until('a sees c again', () => ids(a).join() === 'a,c', 2000);
    assert.deepEqual(ids(c2), ['a', 'c']);
    assert.equal(a.view.nodes.find((n) => n.nodeId === 'c')?.instance, c2.self.instance);
  } finally {
    for (const m of open) await m.close();
  }
});

test('joins and leaves are reported to listeners with a growing version', async () => {
  const p = prefix();
  const a = member(p, 'a');
  const b = member(p, 'b');
  try {
    await a.start();
    const seen: Array<{ version: number; joined: readonly string[]; left: readonly string[] }> = [];
    a.onChange((ch) => seen.push({ version: ch.view.version, joined: ch.joined, left: ch.left }));
    await b.start();
    await until('a sees b', () => ids(a).includes('b'), 2000);
    await b.leave();
    await until('a drops b', () => !ids(a).includes('b'), 2000);
    assert.deepEqual(seen.map((s) => [s.joined, s.left]), [[['b'], []], [[], ['b']]]);
    assert.ok((seen[1]?.version ?? 0) > (seen[0]?.version ?? 0));
  } finally {
    await a.close();
    await b.close();
  }
});

test('with Redis unreachable a node keeps its last view and reports unhealthy; when Redis is back, the nodes register again', async () => {
  const own = await startTestRedis();
  const p = prefix();
  const a = member(p, 'a', own.url);
  const b = member(p, 'b', own.url);
  try {
    await a.start();
    await b.start();
    await until('a sees b', () => ids(a).join() === 'a,b', 2000);
    assert.equal(a.healthy, true);
    await own.stop();
    await until('a reports unhealthy', () => !a.healthy, 5000);
    // Well past the TTL: nobody could beat, yet the view is kept rather than emptied.
    await new Promise((r) => setTimeout(r, TTL_MS + 2 * HEARTBEAT_MS));
    assert.deepEqual(ids(a), ['a', 'b']);
    assert.equal(a.healthy, false);

    // An empty Redis on the same address: the next beats register both nodes again.
    const back = await redisOnPort(own.port);
    try {
      await until('a is healthy again', () => a.healthy, 5000);
      const probe = member(p, 'probe', own.url);
      try {
        await probe.start();
        await until('a fresh node sees both again, and they see it', () => [probe, a, b].every((m) => ids(m).join() === 'a,b,probe'), 3000);
        await probe.leave();
      } finally {
        await probe.close();
      }
    } finally {
      await a.close();
      await b.close();
      await back.stop();
    }
  } finally {
    await a.close();
    await b.close();
  }
});

test('settings that could drop live nodes are refused', () => {
  assert.throws(() => new Membership({ redis: factoryFor(testRedis().url), keyPrefix: 'x:', nodeId: 'a', internalUrl: 'http://x', heartbeatMs: 100, ttlMs: 150 }), /ttlMs must be at least 2/);
});
