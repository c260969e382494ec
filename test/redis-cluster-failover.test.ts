/**
 * The failover of a Redis Cluster master under load, driver by driver: a cluster of 3 masters
 * with a replica each (started by this file on loopback ports), two bus instances (a publisher
 * and enqueuer, a listener and consumer), a rate limiter and presence, all working while one
 * master is killed (SIGKILL) and its replica promoted. Errors are allowed only during the switch;
 * every acknowledged publish reaches the other node's listener once and in order, and every
 * acknowledged job runs. A manual failover (slots move while the old master stays up) loses and
 * fails nothing. Then with every node down, calls fail within a bound instead of hanging.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { TestEvent } from '../src/bus/contract.ts';
import { createBus, type Bus } from '../src/bus/index.ts';
import { createPresence } from '../src/presence/index.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { redisFactory } from '../src/redis/client.ts';
import { redisCli } from '../cluster/lib/redis-cluster.ts';
import { startTestRedisCluster, type TestRedisCluster } from './helpers/redis-cluster.ts';

let redisCluster: TestRedisCluster;

before(async () => {
  redisCluster = await startTestRedisCluster({ replicas: 1, nodeTimeoutMs: 1000 });
});
after(async () => {
  await redisCluster?.stop();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(predicate: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface Outcome {
  at: number;
  ok: boolean;
  error?: string;
}

describe('redis cluster: a master fails, then every node', () => {
  it('the bus, rate limits and presence keep working; errors only during the switch; every acknowledged event and job arrives', { timeout: 90_000 }, async () => {
    const factory = () => redisFactory({ url: '', clusterNodes: redisCluster.seeds, keyPrefix: '' });
    const keyPrefix = `fo:${randomUUID().slice(0, 8)}:`;
    const listenerErrors: string[] = [];
    const config = { keyPrefix, jobShards: 6, claimIdleMs: 2000, onListenerError: (e: unknown) => void listenerErrors.push(String(e)) };
    const a: Bus<TestEvent, string> = createBus({ driver: 'redis', redis: factory(), nodeId: 'a', ...config });
    const b: Bus<TestEvent, string> = createBus({ driver: 'redis', redis: factory(), nodeId: 'b', ...config });
    const limiter = createRateLimiter({ driver: 'redis', redis: factory()('rl'), keyPrefix });
    const presence = createPresence({ driver: 'redis', redis: factory()('presence'), keyPrefix, windowMs: 60_000 });
    const channels = Array.from({ length: 9 }, (_, i) => `room-${i}`);
    const victim = await redisCluster.masterOf(`${keyPrefix}bus:{${channels[0]}}:s`);
    const received = new Map<string, number[]>(channels.map((c) => [c, []]));
    const acked = new Map<string, number[]>(channels.map((c) => [c, []]));
    const ran: string[] = [];
    const jobsAcked: string[] = [];
    const outcomes: Record<'publish' | 'enqueue' | 'limit' | 'presence', Outcome[]> = { publish: [], enqueue: [], limit: [], presence: [] };
    const record = (kind: keyof typeof outcomes, p: Promise<unknown>): Promise<boolean> =>
      p.then(
        () => (outcomes[kind].push({ at: Date.now(), ok: true }), true),
        (e: unknown) => (outcomes[kind].push({ at: Date.now(), ok: false, error: String(e) }), false),
      );
    const unsubscribe = channels.map((c) => b.subscribe(c, (e) => received.get(c)!.push(e.event.n)));
    const stopConsumer = b.consume(async (job) => void ran.push(job), { concurrency: 4 });
    try {
      for (const c of channels) await b.readSince(c, '1-1-0'); // subscribed
      let stop = false;
      let n = 0;
      const load = (async () => {
        const inFlight: Promise<unknown>[] = [];
        while (!stop) {
          n += 1;
          const k = n;
          const channel = channels[k % channels.length]!;
          // Unawaited, as the actors publish: one caller's publishes keep their order.
          inFlight.push(record('publish', a.publish(channel, { n: k })).then((ok) => ok && acked.get(channel)!.push(k)));
          if (k % 4 === 0) inFlight.push(record('enqueue', a.enqueue(`job-${k}`)).then((ok) => ok && jobsAcked.push(`job-${k}`)));
          if (k % 3 === 0) inFlight.push(record('limit', limiter.consume(`send:${channel}`, { limit: 1_000_000, windowSeconds: 10 })));
          if (k % 5 === 0) inFlight.push(record('presence', presence.heartbeat('acme', `u${k % 7}`, Date.now())));
          await sleep(5);
        }
        await Promise.all(inFlight);
      })();
      await sleep(800);
      const killedAt = Date.now();
      await redisCluster.kill(victim);
      await redisCluster.waitFailover(victim, 30_000);
      const recoveredAt = Date.now();
      await sleep(1500);
      stop = true;
      await load;

      const failures = Object.entries(outcomes).flatMap(([kind, list]) => list.filter((o) => !o.ok).map((o) => ({ kind, ...o })));
      const late = failures.filter((f) => f.at < killedAt || f.at > recoveredAt + 4000);
      assert.deepEqual(late, [], 'no failure outside the switch (kill to promotion, plus the retry budget)');
      for (const [kind, list] of Object.entries(outcomes)) {
        assert.ok(list.filter((o) => o.ok && o.at > recoveredAt + 1000).length > 0, `${kind} works again after the switch`);
      }
      // Acknowledged events: every one reaches the other node's listener, once, in order.
      await until(() => channels.every((c) => acked.get(c)!.every((k) => received.get(c)!.includes(k))), 'every acknowledged event on B');
      for (const c of channels) {
        const got = received.get(c)!;
        assert.equal(new Set(got).size, got.length, `no event twice on ${c}`);
        assert.deepEqual(got, [...got].sort((x, y) => x - y), `in order on ${c}`);
      }
      assert.deepEqual(listenerErrors, [], 'no gap reported');
      await until(() => jobsAcked.every((j) => ran.includes(j)), 'every acknowledged job run');
      const summary = Object.fromEntries(Object.entries(outcomes).map(([k, l]) => [k, `${l.filter((o) => !o.ok).length}/${l.length} failed`]));
      process.stdout.write(`# failover of ${victim}: promoted after ${recoveredAt - killedAt} ms; ${JSON.stringify(summary)}\n`);
    } finally {
      for (const u of unsubscribe) u();
      await stopConsumer().catch(() => undefined);
      await Promise.all([a.close(), b.close(), limiter.close(), presence.close()]);
    }
  });

  it('the fan log through the failover of a shard\'s master: every acknowledged publish reaches the other node\'s listeners once, in order per key, no gap', { timeout: 90_000 }, async () => {
    const factory = () => redisFactory({ url: '', clusterNodes: redisCluster.seeds, keyPrefix: '' });
    const keyPrefix = `fan:${randomUUID().slice(0, 8)}:`;
    const listenerErrors: string[] = [];
    const fan = { shards: 2, fanned: (c: string) => c.startsWith('u:') };
    const a: Bus<TestEvent, string> = createBus({ driver: 'redis', redis: factory(), nodeId: 'a', keyPrefix, fan });
    const b: Bus<TestEvent, string> = createBus({ driver: 'redis', redis: factory(), nodeId: 'b', keyPrefix, fan, onListenerError: (e) => void listenerErrors.push(String(e)) });
    const channels = Array.from({ length: 10 }, (_, i) => `u:${i}`);
    const received = new Map<string, number[]>(channels.map((c) => [c, []]));
    const acked: number[] = [];
    const failed: Outcome[] = [];
    const unsubscribe = channels.map((c) => b.subscribe(c, (e) => received.get(c)!.push(e.event.n)));
    try {
      await b.head('u:0');
      // A master with a live replica: the fan shards' masters are fixed by their keys.
      let victim = await redisCluster.masterOf(`${keyPrefix}bus:{fan:0}:s`);
      if ((await redisCluster.replicaOf(victim)) === null) victim = await redisCluster.masterOf(`${keyPrefix}bus:{fan:1}:s`);
      let stop = false;
      const load = (async () => {
        const inFlight: Promise<unknown>[] = [];
        for (let n = 1; !stop; n += 1) {
          inFlight.push(a.publishMany(channels, { n }, `k${n % 4}`).then(() => acked.push(n), (e: unknown) => failed.push({ at: Date.now(), ok: false, error: String(e) })));
          await sleep(5);
        }
        await Promise.all(inFlight);
      })();
      await sleep(800);
      const killedAt = Date.now();
      await redisCluster.kill(victim);
      await redisCluster.waitFailover(victim, 30_000);
      const recoveredAt = Date.now();
      await sleep(1500);
      stop = true;
      await load;
      assert.deepEqual(failed.filter((f) => f.at < killedAt || f.at > recoveredAt + 4000), [], 'no failure outside the switch');
      await until(() => channels.every((c) => acked.every((n) => received.get(c)!.includes(n))), 'every acknowledged event on every channel on B');
      for (const c of channels) {
        const got = received.get(c)!;
        assert.equal(new Set(got).size, got.length, `no event twice on ${c}`);
        for (let k = 0; k < 4; k += 1) {
          const ofKey = got.filter((n) => n % 4 === k);
          assert.deepEqual(ofKey, [...ofKey].sort((x, y) => x - y), `key k${k} in order on ${c}`);
        }
      }
      assert.deepEqual(listenerErrors, [], 'no gap reported');
      process.stdout.write(`# fan log: failover of ${victim}: promoted after ${recoveredAt - killedAt} ms; ${failed.length} publishes failed, ${acked.length} acknowledged\n`);
    } finally {
      for (const u of unsubscribe) u();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a manual failover (the master stays up, its slots move to its replica): listeners follow the slot, nothing acknowledged is lost, nothing fails', { timeout: 60_000 }, async () => {
    const factory = () => redisFactory({ url: '', clusterNodes: redisCluster.seeds, keyPrefix: '' });
    const keyPrefix = `mf:${randomUUID().slice(0, 8)}:`;
    const listenerErrors: string[] = [];
    const a: Bus<TestEvent, string> = createBus({ driver: 'redis', redis: factory(), nodeId: 'a', keyPrefix });
    const b: Bus<TestEvent, string> = createBus({ driver: 'redis', redis: factory(), nodeId: 'b', keyPrefix, onListenerError: (e) => void listenerErrors.push(String(e)) });
    // A channel whose master still has a live replica (the first test's victim left one without).
    let channel = '';
    let replica: number | null = null;
    for (let i = 0; replica === null; i += 1) {
      assert.ok(i < 100, 'a master with a replica');
      channel = `moving-${i}`;
      replica = await redisCluster.replicaOf(await redisCluster.masterOf(`${keyPrefix}bus:{${channel}}:s`));
    }
    const received: number[] = [];
    const acked: number[] = [];
    const failures: string[] = [];
    const stopListening = b.subscribe(channel, (e) => received.push(e.event.n));
    try {
      await b.readSince(channel, '1-1-0');
      let stop = false;
      const load = (async () => {
        const inFlight: Promise<unknown>[] = [];
        for (let n = 1; !stop; n += 1) {
          inFlight.push(a.publish(channel, { n }).then(() => acked.push(n), (e: unknown) => failures.push(String(e))));
          await sleep(5);
        }
        await Promise.all(inFlight);
      })();
      await sleep(500);
      await redisCluster.promote(replica);
      await sleep(7000); // past the clients' next slot map refresh (every 5 s)
      stop = true;
      await load;
      assert.deepEqual(failures, [], 'a graceful failover fails no publish');
      await until(() => acked.every((n) => received.includes(n)), 'every acknowledged event on B');
      assert.deepEqual(received, [...new Set(received)].sort((x, y) => x - y), 'once each, in order');
      assert.deepEqual(listenerErrors, []);
      const clients = await redisCli(['-p', String(replica), 'client', 'list']);
      assert.match(clients, /name=b:bus-sub /, "B's subscriber link moved to the promoted replica");
    } finally {
      stopListening();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('with every node of the cluster down, publish, readSince, enqueue, rate limits and presence reject within a bound instead of hanging', { timeout: 60_000 }, async () => {
    const factory = () => redisFactory({ url: '', clusterNodes: redisCluster.seeds, keyPrefix: '' });
    const keyPrefix = `down:${randomUUID().slice(0, 8)}:`;
    const bus: Bus<TestEvent, string> = createBus({ driver: 'redis', redis: factory(), nodeId: 'a', keyPrefix });
    const limiter = createRateLimiter({ driver: 'redis', redis: factory()('rl'), keyPrefix });
    const presence = createPresence({ driver: 'redis', redis: factory()('presence'), keyPrefix, windowMs: 60_000 });
    try {
      const id = await bus.publish('room', { n: 1 });
      await limiter.consume('k', { limit: 10, windowSeconds: 10 });
      await presence.heartbeat('acme', 'u', Date.now());
      for (const node of redisCluster.nodes) await redisCluster.kill(node.port);
      const bound = async <T>(p: Promise<T>): Promise<T> => {
        let timer: NodeJS.Timeout | undefined;
        try {
          return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('still pending after 15 s')), 15_000)))]);
        } finally {
          clearTimeout(timer);
        }
      };
      const calls: Record<string, Promise<unknown>> = {
        publish: bus.publish('room', { n: 2 }),
        readSince: bus.readSince('room', id),
        enqueue: bus.enqueue('j'),
        'rate limit': limiter.consume('k', { limit: 10, windowSeconds: 10 }),
        heartbeat: presence.heartbeat('acme', 'u', Date.now()),
        statuses: presence.statuses('acme', ['u'], Date.now()),
      };
      const outcomes = await Promise.all(Object.entries(calls).map(async ([name, p]) => `${name}: ${await bound(p).then(() => 'resolved', (e: Error) => (e.message.startsWith('still pending') ? 'pending' : 'rejected'))}`));
      assert.deepEqual(outcomes, Object.keys(calls).map((name) => `${name}: rejected`));
    } finally {
      await Promise.all([bus.close(), limiter.close(), presence.close()]);
    }
  });
});
