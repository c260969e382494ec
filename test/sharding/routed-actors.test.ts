/**
 * The router's retry rules, with a stub placement (every conversation owned by a remote node) and
 * a stub client that runs calls on a real ActorHost and fails them as a test script says.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { invokeLocal, type OpArgs, type OpResult, type Operation } from '../../src/sharding/operations.ts';
import type { Owner } from '../../src/sharding/placement.ts';
import { RoutedActors } from '../../src/sharding/routed-actors.ts';
import type { NodeInfo } from '../../src/sharding/types.ts';
import { ForwardUnavailableError, type ForwardReason } from '../../src/sharding/wire.ts';
import { closeKit, create, history, openKit, text, type Kit } from '../actors/helpers.ts';

const remote: NodeInfo = { nodeId: 'owner', internalUrl: 'http://127.0.0.1:1', startedAt: 0, instance: 'i' };

let kit: Kit;
before(async () => {
  kit = await openKit();
});
after(async () => {
  await closeKit(kit);
});

/**
 * A client whose calls follow `script`: 'run' forwards to the host, 'run-then-<reason>' runs the
 * call and then loses the answer, '<reason>' fails before delivery; past the script, calls run.
 */
function scripted(script: string[]): { client: { call: <O extends Operation>(peer: NodeInfo, op: O, args: OpArgs<O>, id: string) => Promise<OpResult<O>> }; calls: Operation[] } {
  const calls: Operation[] = [];
  return {
    calls,
    client: {
      async call<O extends Operation>(_peer: NodeInfo, op: O, args: OpArgs<O>, id: string): Promise<OpResult<O>> {
        calls.push(op);
        const step = script.shift() ?? 'run';
        if (step === 'run') return invokeLocal(kit.host, op, args);
        if (step.startsWith('run-then-')) {
          await invokeLocal(kit.host, op, args);
          throw new ForwardUnavailableError(step.slice('run-then-'.length) as ForwardReason, id, 'answer lost');
        }
        throw new ForwardUnavailableError(step as ForwardReason, id, 'scripted');
      },
    },
  };
}

const lookedUp: string[] = [];
const placement = {
  owner: (id: string): Owner => {
    lookedUp.push(id);
    return { kind: 'remote', node: remote };
  },
  touched: () => {},
  suspectStale: () => Promise.resolve(),
};

function router(script: string[], deadlineMs = 2000): { actors: RoutedActors; calls: Operation[] } {
  const { client, calls } = scripted(script);
  return { actors: new RoutedActors({ local: kit.host, placement, client, deadlineMs, backoffMs: 1 }), calls };
}

test('a send whose answer was lost is sent again with the same message_id and stored once', async () => {
  const id = await create(kit, 'GROUP', ['u1']);
  const { actors, calls } = router(['run-then-ambiguous']);
  const answer = await actors.sendMessage(kit.ref(id), text('u1', 'once'));
  assert.equal(calls.length, 2);
  assert.equal(answer.created, false, 'the retry found the stored message');
  assert.deepEqual((await history(kit, id)).map((r) => [r.seq, r.message_id]), [[1, answer.message.message_id]]);
});

test('a create without an id gets one before routing, and is routed by it', async () => {
  lookedUp.length = 0;
  const { actors } = router(['unreachable', 'not_owner']);
  const { conversation, created } = await actors.createConversation({ tenant_id: kit.tenant_id, application_id: kit.application_id, type: 'GROUP', name: 'g', description: null, created_by_user_id: 'u1', created_by_client_id: null, member_user_ids: [] });
  assert.equal(created, true);
  assert.deepEqual(lookedUp, [conversation.conversation_id, conversation.conversation_id, conversation.conversation_id], 'every attempt routes by the same id');
});

test('ids minted by the router are UUIDv7, as a single node mints them', async () => {
  const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const { actors } = router([]);
  const { conversation } = await actors.createConversation({ tenant_id: kit.tenant_id, application_id: kit.application_id, type: 'GROUP', name: 'v7', description: null, created_by_user_id: 'u1', created_by_client_id: null, member_user_ids: ['u1'] });
  assert.match(conversation.conversation_id, v7);
  const { message } = await actors.sendMessage(kit.ref(conversation.conversation_id), text('u1', 'v7'));
  assert.match(message.message_id, v7);
  // The local host mints the same kind.
  const local = await kit.host.sendMessage(kit.ref(conversation.conversation_id), text('u1', 'local'));
  assert.match(local.message.message_id, v7);
});

test('a soft delete whose answer was lost is not repeated: the caller gets the 503', async () => {
  const id = await create(kit, 'GROUP', ['u1']);
  const { actors, calls } = router(['run-then-timeout']);
  const err = await actors.softDelete(kit.ref(id), { user_id: 'u1', client_id: null }).catch((e: unknown) => e);
  assert.ok(err instanceof ForwardUnavailableError);
  assert.deepEqual([err.code, err.status, err.headers['Retry-After']], ['service_unavailable', 503, '1']);
  assert.equal(calls.length, 1);
});

test('an overloaded peer is answered at once, without retries', async () => {
  const id = await create(kit, 'GROUP', ['u1']);
  const { actors, calls } = router(['overloaded']);
  const err = await actors.typing(kit.ref(id), { user_id: 'u1' }).catch((e: unknown) => e);
  assert.ok(err instanceof ForwardUnavailableError && err.reason === 'overloaded');
  assert.equal(calls.length, 1);
});

test('an owner that stays unreachable fails the call with the 503 once the deadline passes', async () => {
  const id = await create(kit, 'GROUP', ['u1']);
  const { actors, calls } = router(Array.from({ length: 10_000 }, () => 'unreachable'), 300);
  const started = Date.now();
  const err = await actors.typing(kit.ref(id), { user_id: 'u1' }).catch((e: unknown) => e);
  assert.ok(err instanceof ForwardUnavailableError && err.reason === 'unreachable');
  assert.ok(calls.length > 1, 'retried before giving up');
  assert.ok(Date.now() - started < 1000, 'gave up at the deadline');
});

test('contract errors pass through untouched and are not retried', async () => {
  const id = await create(kit, 'GROUP', ['u1']);
  const { actors, calls } = router([]);
  const err = await actors.sendMessage(kit.ref(id), text('stranger', 'hi')).catch((e: unknown) => e);
  assert.equal((err as { code?: string }).code, 'not_conversation_member');
  assert.equal(calls.length, 1);
});
