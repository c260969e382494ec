/**
 * Chat nodes on a Redis Cluster, end to end: two node processes with CHAT_REDIS_CLUSTER_NODES
 * (no CHAT_REDIS_URL), a real Redis Cluster of 3 masters with a replica each and the IdP, on
 * loopback. Sends through both nodes keep one order, a stream on one node sees sends through the
 * other, rate limits and presence hold across nodes; then the master serving a user's channel is
 * killed under load: the nodes keep serving sends, the stream and rate limits, errors only while
 * its replica is promoted, and nothing acknowledged is lost (history and the live stream).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { bearer, request, type Res } from '../helpers/http.ts';
import { machineToken, userToken } from '../helpers/tokens.ts';

let cluster: TestCluster;
const tok: Record<string, string> = {};
const BASE = '/tenants/acme/applications/support';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const on = (i: number, path: string): string => `${cluster.node(i).api}${path}`;
const post = (i: number, path: string, token: string, body: unknown, headers: Record<string, string> = {}): Promise<Res> =>
  request(on(i, path), { method: 'POST', headers: Object.assign(bearer(token), { 'Content-Type': 'application/json' }, headers), body: JSON.stringify(body) });
const get = (i: number, path: string, token: string): Promise<Res> => request(on(i, path), { headers: bearer(token) });

async function group(members: string[]): Promise<string> {
  const res = await post(0, `${BASE}/conversations`, tok.machine!, { type: 'GROUP', name: `g-${crypto.randomUUID().slice(0, 6)}`, member_user_ids: members });
  assert.equal(res.status, 201, res.text);
  return res.json().conversation_id as string;
}

async function history(i: number, conversationId: string): Promise<Array<{ message_id: string; seq: number; body: string }>> {
  const all: Array<{ message_id: string; seq: number; body: string }> = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor === null ? '' : `&before=${encodeURIComponent(cursor)}`;
    const res = await get(i, `${BASE}/conversations/${conversationId}/messages?limit=100${q}`, tok.machine!);
    assert.equal(res.status, 200, res.text);
    all.push(...(res.json().items as Array<{ message_id: string; seq: number; body: string }>));
    cursor = res.json().next_cursor as string | null;
  } while (cursor !== null);
  return all.reverse();
}

interface Attempt {
  at: number;
  status: number;
}

/** Sends as a client would: one Idempotency-Key, a retryable 503 or a refused connection retried. */
async function send(i: number, conversationId: string, token: string, body: string, attempts: Attempt[], actor?: string): Promise<{ id: string; res: Res }> {
  const key = crypto.randomUUID();
  for (let attempt = 0; ; attempt += 1) {
    let res: Res | null = null;
    try {
      res = await post(i, `${BASE}/conversations/${conversationId}/messages`, token, actor ? { body, actor_user_id: actor } : { body }, { 'Idempotency-Key': key });
    } catch {
      res = null;
    }
    attempts.push({ at: Date.now(), status: res?.status ?? 0 });
    if (res?.status === 201) return { id: res.json().message_id as string, res };
    if (attempt >= 40 || (res !== null && res.status !== 503 && res.status !== 500)) throw new Error(`send answered ${res?.status}: ${res?.text}`);
    await sleep(250);
  }
}

/**
 * An EventSource on node `i` for `token`'s user, recording the bodies of message.created. On a
 * `reset` (its position is no longer held: a failover lost events), it does what a client must:
 * reads the state again, here the history of `resync`'s conversations, into `synced`.
 */
async function stream(i: number, token: string, resync: string[] = []): Promise<{ es: EventSource; bodies: string[]; synced: Set<string>; resets: number; errors: number }> {
  const cred = await get(i, `${BASE}/notifications/realtime-token`, token);
  assert.equal(cred.status, 200, cred.text);
  const url = new URL(cred.json().stream_url as string);
  const es = new EventSource(`${cluster.node(i).origin}${url.pathname}${url.search}`);
  const out = { es, bodies: [] as string[], synced: new Set<string>(), resets: 0, errors: 0 };
  es.addEventListener('message.created', (e) => out.bodies.push((JSON.parse(e.data) as { data: { message: { body: string } } }).data.message.body));
  es.addEventListener('reset', () => {
    out.resets += 1;
    for (const id of resync) void history(i, id).then((ms) => ms.forEach((m) => out.synced.add(m.body)), () => undefined);
  });
  es.addEventListener('error', () => (out.errors += 1));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('the stream did not open')), 10_000);
    es.addEventListener('ready', () => {
      clearTimeout(t);
      resolve();
    });
  });
  return out;
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

before(async () => {
  // Membership at its production timings: a node's entry outlives the ~3 s a replica takes to be
  // promoted, so the ring stays whole through the failover of the master holding it.
  cluster = await startCluster({ nodes: 2, heartbeatMs: 1000, nodeTtlMs: 5000, redisCluster: { replicas: 1 }, env: { CHAT_RATE_SEND: '100000/10s', CHAT_RATE_CLIENT: '1000000/60s' } });
  tok.machine = await machineToken(cluster.idp.url);
  tok.alice = await userToken(cluster.idp.url, 'alice');
  tok.bob = await userToken(cluster.idp.url, 'bob');
  tok.carol = await userToken(cluster.idp.url, 'carol');
});
after(async () => {
  await cluster?.stop();
});

describe('redis cluster: chat nodes', () => {
  test('sends through both nodes keep one order; a stream on one node sees sends through the other; rate limits and presence are shared', async () => {
    const id = await group(['alice', 'bob', 'carol']);
    const bob = await stream(1, tok.bob!);
    const attempts: Attempt[] = [];
    try {
      const sent = await Promise.all(Array.from({ length: 40 }, (_, k) => send(k % 2, id, tok.machine!, `m${k}`, attempts, 'alice')));
      const messages = await history(1, id);
      assert.deepEqual(messages.map((m) => m.seq), messages.map((_, k) => k + 1));
      assert.deepEqual(new Set(messages.map((m) => m.message_id)), new Set(sent.map((s) => s.id)));
      await until('every message on the stream', () => messages.every((m) => bob.bodies.includes(m.body)));
      const remaining: number[] = [];
      for (let k = 0; k < 4; k += 1) {
        const { res } = await send(k % 2, id, tok.carol!, `limited ${k}`, attempts);
        remaining.push(Number(/r=(\d+)/.exec(String(res.headers.ratelimit ?? ''))?.[1]));
      }
      // With leases (the default) each node answers its own view: the count at its last grant,
      // which includes what the other node leased and has not used yet. So each node's figure
      // falls with every send through either node, never rises, and the other node's sends show
      // in it (one budget); exact across nodes with leases off (test/cluster/cluster.test.ts).
      const [n0, n1] = [remaining.filter((_, k) => k % 2 === 0), remaining.filter((_, k) => k % 2 === 1)];
      for (const own of [n0, n1]) assert.ok(own[1]! <= own[0]! - 2, `each node sees both nodes' sends: ${remaining.join(', ')}`);
      assert.ok(remaining.every((r) => r <= 100_000 - 1 && r >= 100_000 - 4 - 2 * 8), `one budget across nodes: ${remaining.join(', ')}`);
      const hb = await request(on(0, '/tenants/acme/presence/heartbeat'), { method: 'POST', headers: bearer(tok.carol!), body: '' });
      assert.equal(hb.status, 204, hb.text);
      const presence = await get(1, '/tenants/acme/presence?user_ids=carol', tok.bob!);
      assert.equal((presence.json().items as Array<{ status: string }>)[0]?.status, 'online', presence.text);
    } finally {
      bob.es.close();
    }
  });

  test("the master serving a user's channel fails under load: sends, the stream and rate limits keep working, errors only during the switch, nothing acknowledged lost", { timeout: 120_000 }, async () => {
    const ids = await Promise.all(Array.from({ length: 4 }, () => group(['alice', 'bob', 'carol'])));
    const bob = await stream(0, tok.bob!, ids);
    const attempts: Attempt[] = [];
    const acknowledged = new Map<string, Map<string, string>>(ids.map((id) => [id, new Map()]));
    let stop = false;
    let k = 0;
    try {
      const load = Promise.all(
        ids.map(async (id, g) => {
          while (!stop) {
            k += 1;
            const body = `load ${g}-${k}`;
            // Alice's own token: every send also passes her per-user rate limit on Redis.
            const { id: messageId } = await send(k % 2, id, tok.alice!, body, attempts);
            acknowledged.get(id)!.set(messageId, body);
          }
        }),
      );
      await sleep(1500);
      // With the fan log (CHAT_REDIS_FAN_SHARDS, 1 unless the environment says otherwise), bob's
      // events live in the fan shards, not in his channel's keys: the master of shard 0 is the one to kill.
      const victim = await cluster.redisCluster!.masterOf(Number(process.env.CHAT_REDIS_FAN_SHARDS ?? 1) > 0 ? '{fan:0}' : '{user:acme:bob}');
      const killedAt = Date.now();
      await cluster.redisCluster!.kill(victim);
      await cluster.redisCluster!.waitFailover(victim, 30_000);
      const promotedAt = Date.now();
      await sleep(2500);
      stop = true;
      await load;

      // Every acknowledged send is in the history once, in one order, whichever node is asked.
      for (const id of ids) {
        const messages = await history(1, id);
        assert.deepEqual(messages.map((m) => m.seq), messages.map((_, n) => n + 1), 'seqs 1..n');
        const stored = new Set(messages.map((m) => m.message_id));
        for (const messageId of acknowledged.get(id)!.keys()) assert.ok(stored.has(messageId), `acknowledged ${messageId} stored`);
      }
      // ...and reached the stream opened before the failover, once each: live, or in what the
      // client read again after a `reset` (events the failover lost are never passed over).
      const bodies = [...acknowledged.values()].flatMap((m) => [...m.values()]);
      const reached = (b: string): boolean => bob.bodies.includes(b) || bob.synced.has(b);
      await until('every acknowledged message on the stream', () => bodies.every(reached)).catch((error: unknown) => {
        const missing = bodies.filter((b) => !reached(b));
        const warnings = cluster.started.flatMap((n) => n.lines.filter((l) => /"level":(40|50)/.test(l)));
        throw new Error(`${String(error)}: missing ${missing.join(', ')} (killed at ${killedAt}, promoted at ${promotedAt})\n${warnings.join('\n')}`);
      });
      const live = bob.bodies.filter((b) => b.startsWith('load '));
      assert.equal(new Set(live).size, live.length, 'no message twice on the stream');
      // Errors: answers other than 201 only between the kill and a little after the promotion.
      const failed = attempts.filter((a) => a.status !== 201);
      const outside = failed.filter((a) => a.at < killedAt || a.at > promotedAt + 4000);
      assert.deepEqual(outside, [], 'no failure outside the switch');
      const after = attempts.filter((a) => a.at > promotedAt + 1000 && a.status === 201).length;
      assert.ok(after > 10, `sends after the switch: ${after}`);
      process.stdout.write(`# redis cluster failover of ${victim}: promoted after ${promotedAt - killedAt} ms; ${attempts.length} attempts, ${failed.length} not 201 (${[...new Set(failed.map((a) => a.status))].join(', ') || 'none'}); ${bodies.length} messages acknowledged; stream errors ${bob.errors}, resets ${bob.resets}\n`);
    } finally {
      stop = true;
      bob.es.close();
    }
  });
});
