/**
 * The cluster in one process: 2-3 "nodes", each an ActorHost over one shared SQLite file with its
 * own local bus, its own internal server on a random port, its own Membership on one real
 * redis-server, and its RoutedActors. Requests are issued through every node.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ApiError } from '../../src/errors/catalog.ts';
import { startSharding, type Sharding } from '../../src/sharding/index.ts';
import { RoutedActors } from '../../src/sharding/routed-actors.ts';
import { useTestRedis } from '../helpers/redis.ts';
import { closeKit, history, openKit, tempFile, text, type Kit } from '../actors/helpers.ts';
import { factoryFor, prefix, testLog, until } from './helpers.ts';

const SECRET = 'forwarding-test-cluster-secret';
const HEARTBEAT_MS = 100;
const TTL_MS = 400;

const testRedis = useTestRedis();

interface TestNode {
  id: string;
  kit: Kit;
  sharding: Sharding;
  actors: RoutedActors;
}

interface Cluster {
  nodes: TestNode[];
  tenant_id: string;
  /** Closes every node (graceful leave unless already closed). */
  close(): Promise<void>;
}

async function startCluster(ids: string[]): Promise<Cluster> {
  const file = tempFile();
  const tenant_id = `tenant-${randomUUID()}`;
  const keyPrefix = prefix();
  const nodes: TestNode[] = [];
  const cluster: Cluster = {
    nodes,
    tenant_id,
    async close() {
      for (const n of nodes) await n.sharding.close({ graceMs: 1000 });
      for (const n of nodes) await closeKit(n.kit);
    },
  };
  try {
    for (const id of ids) {
      const kit = await openKit({ file, tenant_id, host: { enqueuePush: false } });
      const sharding = await startSharding({
        actorHost: kit.host,
        redisFactory: factoryFor(testRedis().url),
        keyPrefix,
        nodeId: id,
        internal: { host: '127.0.0.1', port: 0 },
        secret: SECRET,
        timings: { heartbeatMs: HEARTBEAT_MS, ttlMs: TTL_MS, deadlineMs: 5000, forwardTimeoutMs: 2000 },
        log: testLog(),
      }).catch(async (err: unknown) => {
        await closeKit(kit);
        throw err;
      });
      nodes.push({ id, kit, sharding, actors: sharding.actors });
    }
    await converged(nodes);
    return cluster;
  } catch (err) {
    await cluster.close();
    throw err;
  }
}

/** Waits until every node's view lists exactly the given nodes. */
function converged(nodes: TestNode[], expected = nodes.map((n) => n.id).sort()): Promise<number> {
  return until(`views converge on ${expected.join(',')}`, () => nodes.every((n) => n.sharding.membership.view.nodes.map((x) => x.nodeId).join() === expected.join()), 3000);
}

/** A fresh conversation id that `node`'s ring places on `ownerId`. */
function idOwnedBy(node: TestNode, ownerId: string): string {
  for (;;) {
    const id = randomUUID();
    const owner = node.sharding.placement.owner(id);
    if ((owner.kind === 'self' ? node.id : owner.kind === 'remote' ? owner.node.nodeId : null) === ownerId) return id;
  }
}

async function createGroup(node: TestNode, conversation_id: string, users: string[]): Promise<void> {
  await node.actors.createConversation({
    tenant_id: node.kit.tenant_id,
    application_id: node.kit.application_id,
    conversation_id,
    type: 'GROUP',
    name: 'cluster test',
    description: null,
    created_by_user_id: users[0] ?? null,
    created_by_client_id: null,
    member_user_ids: users.slice(1),
  });
}

function assertOneOrder(rows: Array<{ seq: number; message_id: string }>, count: number): void {
  assert.deepEqual(
    rows.map((r) => r.seq),
    Array.from({ length: count }, (_, i) => i + 1),
    'seqs run 1..n with no gap and no duplicate',
  );
  assert.equal(new Set(rows.map((r) => r.message_id)).size, count, 'no message stored twice');
}

test('parallel sends to one conversation through every node keep one order, without gaps or duplicates', async () => {
  const cluster = await startCluster(['n1', 'n2', 'n3']);
  try {
    const [n1, n2, n3] = cluster.nodes as [TestNode, TestNode, TestNode];
    const id = idOwnedBy(n1, 'n2');
    await createGroup(n1, id, ['u1', 'u2', 'u3']);
    const sends = [];
    for (let i = 0; i < 30; i++) {
      for (const [k, node] of [n1, n2, n3].entries()) sends.push(node.actors.sendMessage(node.kit.ref(id), text(`u${k + 1}`, `${node.id}-${i}`)));
    }
    const answers = await Promise.all(sends);
    assert.ok(answers.every((a) => a.created));
    assert.deepEqual(
      answers.map((a) => a.message.seq).sort((a, b) => a - b),
      Array.from({ length: 90 }, (_, i) => i + 1),
    );
    const rows = await history(n1.kit, id);
    assertOneOrder(rows, 90);
    assert.deepEqual(new Set(rows.map((r) => r.message_id)), new Set(answers.map((a) => a.message.message_id)));
    // Only the owner ran the conversation: the others forwarded every call.
    assert.deepEqual(
      cluster.nodes.map((n) => n.kit.host.stats().actors),
      [0, 1, 0],
    );
    assert.deepEqual([n1.sharding.stats.local, n3.sharding.stats.local], [0, 0]);
    assert.ok(n1.sharding.stats.forwarded >= 31 && n3.sharding.stats.forwarded >= 30);
  } finally {
    await cluster.close();
  }
});

test('errors of the remote owner arrive with the code a local call answers', async () => {
  const cluster = await startCluster(['n1', 'n2']);
  try {
    const [n1, n2] = cluster.nodes as [TestNode, TestNode];
    const id = idOwnedBy(n1, 'n2');
    await createGroup(n1, id, ['u1', 'u2']);
    const outsider = await n1.actors.sendMessage(n1.kit.ref(id), text('u9', 'let me in')).catch((e: unknown) => e);
    assert.ok(outsider instanceof ApiError);
    assert.deepEqual([outsider.code, outsider.status], ['not_conversation_member', 403]);

    const missing = idOwnedBy(n1, 'n2');
    const notFound = await n1.actors.editMessage(n1.kit.ref(missing), { message_id: randomUUID(), body: 'x', by: { user_id: 'u1', client_id: null }, scope: 'own' }).catch((e: unknown) => e);
    assert.ok(notFound instanceof ApiError);
    assert.equal(notFound.code, 'not_found');

    await n1.actors.archive(n1.kit.ref(id), { user_id: 'u1', client_id: null });
    const archived = await n1.actors.sendMessage(n1.kit.ref(id), text('u1', 'too late')).catch((e: unknown) => e);
    const local = await n2.kit.host.sendMessage(n2.kit.ref(id), text('u1', 'too late')).catch((e: unknown) => e);
    assert.ok(archived instanceof ApiError && local instanceof ApiError);
    assert.deepEqual([archived.code, archived.status, archived.message], [local.code, local.status, local.message]);
    assert.equal(archived.code, 'conversation_archived');
    assert.equal(n1.kit.host.stats().actors, 0, 'n1 forwarded every call');
  } finally {
    await cluster.close();
  }
});

test('a node that dies mid-way: the survivors take its conversations after the TTL and sends continue, fenced', async () => {
  const cluster = await startCluster(['n1', 'n2', 'n3']);
  try {
    const [n1, n2, n3] = cluster.nodes as [TestNode, TestNode, TestNode];
    const id = idOwnedBy(n1, 'n3');
    await createGroup(n1, id, ['u1', 'u2']);
    const before = await n1.kit.store.conversations.get(n1.kit.ref(id), { kind: 'machine' }, 0);
    let sent = 0;
    let crashed = false;
    const loop = async (node: TestNode, user: string): Promise<void> => {
      for (let i = 0; i < 30; i++) {
        await node.actors.sendMessage(node.kit.ref(id), text(user, `${node.id}-${i}`));
        sent++;
        if (sent === 20 && !crashed) {
          crashed = true;
          // n3 stops heartbeating and answering, without leaving: a crash as the others see it.
          await n3.sharding.close({ leave: false, graceMs: 0 });
        }
      }
    };
    await Promise.all([loop(n1, 'u1'), loop(n2, 'u2')]);
    assert.equal(sent, 60);
    await converged([n1, n2], ['n1', 'n2']);
    assertOneOrder(await history(n1.kit, id), 60);
    // A survivor activated the conversation with a new epoch, which fences n3's old actor.
    const after = await n1.kit.store.conversations.get(n1.kit.ref(id), { kind: 'machine' }, 0);
    assert.ok((after?.epoch ?? 0) > (before?.epoch ?? 0), `epoch ${String(after?.epoch)} after, ${String(before?.epoch)} before`);
    assert.equal(n1.kit.host.stats().actors + n2.kit.host.stats().actors, 1);
    assert.ok(n1.sharding.stats.retries + n2.sharding.stats.retries > 0, 'the crash was absorbed by retries');
    assert.equal(n1.sharding.stats.unavailable + n2.sharding.stats.unavailable, 0);
  } finally {
    await cluster.close();
  }
});

test('a graceful leave hands conversations over at once and passivates them on the leaver', async () => {
  const cluster = await startCluster(['n1', 'n2']);
  try {
    const [n1, n2] = cluster.nodes as [TestNode, TestNode];
    const id = idOwnedBy(n1, 'n2');
    await createGroup(n2, id, ['u1']);
    await n1.actors.sendMessage(n1.kit.ref(id), text('u1', 'before'));
    assert.equal(n2.kit.host.stats().actors, 1);
    const leftAt = Date.now();
    await n2.sharding.leave();
    await converged([n1, n2], ['n1']);
    assert.ok(Date.now() - leftAt < TTL_MS, 'seen through the notice, not the TTL');
    await until('n2 passivates the conversation it handed over', () => n2.kit.host.stats().actors === 0, 2000);
    // Calls through the leaver are forwarded to the new owner.
    await n2.actors.sendMessage(n2.kit.ref(id), text('u1', 'after'));
    assert.deepEqual((await history(n1.kit, id)).map((r) => r.body), ['before', 'after']);
    assert.equal(n1.kit.host.stats().actors, 1);
  } finally {
    await cluster.close();
  }
});

test('two nodes that both believe they own a conversation never assign one seq twice (fencing)', async () => {
  // No Redis here: each router's placement says "self" for everything, the worst disagreement.
  const file = tempFile();
  const tenant_id = `tenant-${randomUUID()}`;
  const a = await openKit({ file, tenant_id, host: { enqueuePush: false } });
  const b = await openKit({ file, tenant_id, host: { enqueuePush: false } });
  try {
    const selfish = { owner: () => ({ kind: 'self' as const }), touched: () => {}, suspectStale: () => Promise.resolve() };
    const noClient = { call: () => Promise.reject(new Error('never forwards')) };
    const ra = new RoutedActors({ local: a.host, placement: selfish, client: noClient, deadlineMs: 3000, backoffMs: 5 });
    const rb = new RoutedActors({ local: b.host, placement: selfish, client: noClient, deadlineMs: 3000, backoffMs: 5 });
    const id = randomUUID();
    await ra.createConversation({ tenant_id, application_id: a.application_id, conversation_id: id, type: 'GROUP', name: 'g', description: null, created_by_user_id: 'u1', created_by_client_id: null, member_user_ids: [] });
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => (i % 2 ? ra : rb).sendMessage(a.ref(id), text('u1', `m${i}`))));
    const ok = results.filter((r) => r.status === 'fulfilled').map((r) => r.value.message.seq);
    assert.ok(ok.length > 0);
    assert.equal(new Set(ok).size, ok.length, 'no seq answered twice');
    const rows = await history(a, id);
    assert.equal(new Set(rows.map((r) => r.seq)).size, rows.length, 'no seq stored twice');
    assert.equal(rows.length, ok.length, 'every acknowledged send is stored, nothing else');
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as ApiError).code, 'service_unavailable');
  } finally {
    await closeKit(a);
    await closeKit(b);
  }
});
