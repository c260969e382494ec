/**
 * The node-to-node channel without Redis: a real InternalServer over a real ActorHost (or a stub
 * host where a test needs an operation to hang or fail), called through the ForwardClient.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { ActorUnavailableError } from '../../src/actors/errors.ts';
import { ApiError } from '../../src/errors/catalog.ts';
import { ForwardClient } from '../../src/sharding/forward-client.ts';
import { InternalServer } from '../../src/sharding/internal-server.ts';
import type { Owner } from '../../src/sharding/placement.ts';
import type { LocalActorHost, NodeInfo } from '../../src/sharding/types.ts';
import { ForwardUnavailableError, RemoteServerError, decodeError, encodeError } from '../../src/sharding/wire.ts';
import { freePort } from '../helpers/redis.ts';
import { closeKit, create, history, openKit, text, type Kit } from '../actors/helpers.ts';

const SECRET = 'a-cluster-secret-for-tests';
const elsewhere: NodeInfo = { nodeId: 'other', internalUrl: 'http://127.0.0.1:1', startedAt: 0, instance: 'o' };
/** Conversations whose id starts with "elsewhere-" belong to another node in this stub view. */
const placement = {
  selfId: 'owner',
  owner: (id: string): Owner => (id.startsWith('elsewhere-') ? { kind: 'remote', node: elsewhere } : { kind: 'self' }),
  touched: () => {},
  suspectStale: () => Promise.resolve(),
};

let kit: Kit;
let server: InternalServer;
let peer: NodeInfo;
const clients: ForwardClient[] = [];

function client(extra: Partial<ConstructorParameters<typeof ForwardClient>[0]> = {}): ForwardClient {
  const c = new ForwardClient({ secret: SECRET, selfId: 'sender', ...extra });
  clients.push(c);
  return c;
}

async function serve(actors: LocalActorHost, maxBodyBytes?: number): Promise<{ server: InternalServer; peer: NodeInfo }> {
  const s = await InternalServer.listen({ host: '127.0.0.1', port: 0, secret: SECRET, actors, placement, maxBodyBytes });
  return { server: s, peer: { nodeId: 'owner', internalUrl: `http://127.0.0.1:${s.port}`, startedAt: 0, instance: 'i' } };
}

/** A host whose sendMessage waits until released, and whose typing throws a non-contract error. */
function stubHost(): { host: LocalActorHost; release: () => void; started: () => number } {
  let count = 0;
  const waiting: Array<() => void> = [];
  const stub = {
    sendMessage: () => {
      count++;
      return new Promise((resolve) => waiting.push(() => resolve({ created: true })));
    },
    typing: () => Promise.reject(new Error('disk on fire')),
    passivate: () => Promise.resolve(false),
  };
  return { host: stub as unknown as LocalActorHost, release: () => waiting.splice(0).forEach((w) => w()), started: () => count };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

before(async () => {
  kit = await openKit();
  ({ server, peer } = await serve(kit.host));
});
after(async () => {
  for (const c of clients) c.close();
  await server.close();
  await closeKit(kit);
});

test('a forwarded operation runs on the host and answers what the host answered', async () => {
  const c = client();
  const conversation_id = randomUUID();
  const created = await c.call(peer, 'createConversation', [{ tenant_id: kit.tenant_id, application_id: kit.application_id, conversation_id, type: 'GROUP', name: 'g', description: null, created_by_user_id: 'u1', created_by_client_id: null, member_user_ids: ['u2'] }], conversation_id);
  assert.equal(created.created, true);
  assert.equal(created.conversation.conversation_id, conversation_id);
  const sent = await c.call(peer, 'sendMessage', [kit.ref(conversation_id), text('u1', 'hello')], conversation_id);
  assert.equal(sent.message.seq, 1);
  assert.deepEqual(await history(kit, conversation_id), [{ seq: 1, body: 'hello', message_id: sent.message.message_id, status: 'ACTIVE' }]);
  // A void operation answers undefined, as the host does.
  assert.equal(await c.call(peer, 'typing', [kit.ref(conversation_id), { user_id: 'u1' }], conversation_id), undefined);
});

test("the owner's contract errors arrive with the same code, status, message and headers", async () => {
  const c = client();
  const missing = randomUUID();
  const local = await rejection(kit.host.sendMessage(kit.ref(missing), text('u1', 'x')));
  const remote = await rejection(c.call(peer, 'sendMessage', [kit.ref(missing), text('u1', 'x')], missing));
  assert.ok(remote instanceof ApiError && local instanceof ApiError);
  assert.deepEqual([remote.code, remote.status, remote.messages, remote.headers], [local.code, local.status, local.messages, local.headers]);
  assert.equal(remote.code, 'not_found');

  const id = await create(kit, 'GROUP', ['u1', 'u2']);
  await c.call(peer, 'archive', [kit.ref(id), { user_id: 'u1', client_id: null }], id);
  const archived = await rejection(c.call(peer, 'sendMessage', [kit.ref(id), text('u1', 'x')], id));
  assert.ok(archived instanceof ApiError);
  assert.equal(archived.code, 'conversation_archived');
  assert.equal(archived.status, 422);

  // The retryable 503s keep their class, reason and Retry-After through the wire.
  const fenced = encodeError(new ActorUnavailableError('fenced', id));
  const back = decodeError(fenced.status, JSON.parse(JSON.stringify(fenced.body)), 'owner');
  assert.ok(back instanceof ActorUnavailableError);
  assert.deepEqual([back.reason, back.conversation_id, back.status, back.headers['Retry-After']], ['fenced', id, 503, '1']);
});

test('a conversation the receiver does not own is refused as a retryable not_owner', async () => {
  const id = `elsewhere-${randomUUID()}`;
  const err = await rejection(client().call(peer, 'sendMessage', [kit.ref(id), text('u1', 'x')], id));
  assert.ok(err instanceof ForwardUnavailableError);
  assert.equal(err.reason, 'not_owner');
  assert.equal(err.undelivered, true);
  assert.equal(err.code, 'service_unavailable');
});

test('the channel refuses a wrong secret, an unknown operation and an oversized body, as server errors on the sender', async () => {
  const id = randomUUID();
  const wrong = await rejection(client({ secret: 'not-the-cluster-secret' }).call(peer, 'typing', [kit.ref(id), { user_id: 'u1' }], id));
  assert.ok(wrong instanceof RemoteServerError, String(wrong));
  assert.match(wrong.message, /invalid_token/);

  const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(`${peer.internalUrl}/internal/v1/actors/dropDatabase`, { method: 'POST', headers: { 'x-chat-cluster-secret': SECRET, 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end('{"args":[]}');
  });
  assert.equal(raw.status, 404);
  assert.equal((JSON.parse(raw.body) as { error: { channel: boolean } }).error.channel, true);

  const small = await serve(kit.host, 2048);
  try {
    const big = await rejection(client().call(small.peer, 'sendMessage', [kit.ref(id), text('u1', 'x'.repeat(4096))], id));
    assert.ok(big instanceof RemoteServerError, String(big));
    assert.match(big.message, /payload_too_large/);
  } finally {
    await small.server.close();
  }
});

test('a non-contract failure on the owner arrives as a RemoteServerError, rendered as server_error by the edge', async () => {
  const stub = stubHost();
  const s = await serve(stub.host);
  try {
    const id = randomUUID();
    const err = await rejection(client().call(s.peer, 'typing', [kit.ref(id), { user_id: 'u1' }], id));
    assert.ok(err instanceof RemoteServerError && !(err instanceof ApiError));
    assert.match(err.message, /disk on fire/);
  } finally {
    await s.server.close();
  }
});

test('per peer, calls beyond in-flight plus queue are refused at once; a call without an answer times out', async () => {
  const stub = stubHost();
  const s = await serve(stub.host);
  try {
    const c = client({ maxInFlightPerPeer: 2, maxQueuedPerPeer: 1, timeoutMs: 10_000 });
    const id = randomUUID();
    const call = (): Promise<unknown> => c.call(s.peer, 'sendMessage', [kit.ref(id), text('u1', 'x')], id);
    const held = [call(), call(), call()];
    const refused = await rejection(call());
    assert.ok(refused instanceof ForwardUnavailableError);
    assert.equal(refused.reason, 'overloaded');
    assert.equal(c.pendingTo(s.peer.internalUrl), 3);
    // Only two reached the host: the third waits for a socket.
    while (stub.started() < 2) await new Promise((r) => setTimeout(r, 10));
    assert.equal(stub.started(), 2);
    stub.release();
    while (stub.started() < 3) await new Promise((r) => setTimeout(r, 10));
    stub.release();
    await Promise.all(held);
    assert.equal(c.pendingTo(s.peer.internalUrl), 0);

    const slow = await rejection(c.call(s.peer, 'sendMessage', [kit.ref(id), text('u1', 'x')], id, 150));
    assert.ok(slow instanceof ForwardUnavailableError);
    assert.equal(slow.reason, 'timeout');
    assert.equal(slow.undelivered, false);
    stub.release();
  } finally {
    await s.server.close();
  }
});

test('a peer nobody listens on is unreachable: the call was never delivered', async () => {
  const port = await freePort();
  const id = randomUUID();
  const err = await rejection(client().call({ ...peer, internalUrl: `http://127.0.0.1:${port}` }, 'typing', [kit.ref(id), { user_id: 'u1' }], id));
  assert.ok(err instanceof ForwardUnavailableError);
  assert.equal(err.reason, 'unreachable');
  assert.equal(err.undelivered, true);
});

test('a closed server refuses calls on kept-alive connections as draining (retryable)', async () => {
  const s = await serve(kit.host);
  const c = client();
  const id = await create(kit, 'GROUP', ['u1']);
  await c.call(s.peer, 'typing', [kit.ref(id), { user_id: 'u1' }], id);
  await s.server.close();
  const err = await rejection(c.call(s.peer, 'typing', [kit.ref(id), { user_id: 'u1' }], id));
  assert.ok(err instanceof ActorUnavailableError || (err instanceof ForwardUnavailableError && err.undelivered), String(err));
});
