/**
 * Sends under an Idempotency-Key after an ambiguous write, on a real Cassandra: the first try's
 * logged batch answers a write timeout and lands later (or had landed already), and the retry
 * (a re-claimed actor here or on another node, as after a 503) must not store the message a
 * second time (src/store/cassandra/message-store.ts, step 5). The ring fault test saw it happen
 * (test/faults/cassandra-replication.faults.ts); here a wrapped client makes it deterministic,
 * on one node of its own (test/helpers/cassandra.ts) or on CASSANDRA_CONTACT_POINTS when set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import cassandra from 'cassandra-driver';
import type { CassandraChatStore } from '../../src/store/cassandra/cassandra-store.ts';
import type { CqlClient } from '../../src/store/cassandra/cql.ts';
import { StoreUnavailableError, type AppendMessageInput, type ConversationRecord, type MessageRecord } from '../../src/store/index.ts';
import { messageInput, ref, w } from '../../src/store/contract/fixtures.ts';
import { useCassandraStores } from '../helpers/cassandra.ts';

const { open, opened } = useCassandraStores('chat_ambiguous_writes');

/** The server's answer to a logged batch whose replicas did not all answer in time. */
function writeTimeout(): Error {
  const e = new cassandra.errors.ResponseError(cassandra.types.responseErrorCodes.writeTimeout, 'Operation timed out - received only 1 responses.');
  return Object.assign(e, { writeType: 'BATCH', consistencies: cassandra.types.consistencies.localQuorum, received: 1, blockFor: 2 });
}

/**
 * A client whose next message batch answers a write timeout: `late` keeps it and applies it on
 * `land()` (it landed after its retry), `applied` applies it first (the answer was lost).
 */
function ambiguousClient(): { wrap: (c: CqlClient) => CqlClient; arm(mode: 'late' | 'applied'): void; land(): Promise<void> } {
  let mode: 'late' | 'applied' | null = null;
  let held: (() => Promise<unknown>) | null = null;
  return {
    wrap: (c) => ({
      execute: (q, p, o) => c.execute(q, p, o),
      shutdown: () => c.shutdown(),
      batch: async (q, o) => {
        if (mode === null || !q.some((s) => s.query.startsWith('INSERT INTO messages_by_conversation'))) return c.batch(q, o);
        const m = mode;
        mode = null;
        if (m === 'applied') await c.batch(q, o);
        else held = () => c.batch(q, o);
        throw writeTimeout();
      },
    }),
    arm: (m) => void (mode = m),
    land: async () => {
      assert.ok(held, 'a batch was held');
      await held();
      held = null;
    },
  };
}

const ctx = (): { tenant_id: string; application_id: string } => ({ tenant_id: `t-${randomUUID()}`, application_id: 'app-1' });

async function create(store: CassandraChatStore): Promise<ConversationRecord> {
  const { conversation } = await store.conversations.create({
    ...ctx(), conversation_id: randomUUID(), type: 'GROUP', name: 'g', description: null, created_by_user_id: 'ann', created_by_client_id: null,
    members: ['ann', 'bob'].map((user_id) => ({ member_id: randomUUID(), user_id, role: 'MEMBER' as const })),
  });
  return conversation;
}

async function history(store: CassandraChatStore, conv: ConversationRecord): Promise<MessageRecord[]> {
  const page = await store.messages.list({ ...ref(conv), viewer_user_id: null, limit: 100 });
  assert.ok(page);
  return page.items;
}

/** A keyed send: the id an Idempotency-Key derives, the same in every try. */
function keyed(conv: ConversationRecord, seq: number, message_id: string, at: string, body = 'once'): AppendMessageInput {
  return messageInput(conv, seq, 'ann', { message_id, body, at, retryable_id: true });
}

const T1 = '2026-11-26T10:00:00.000Z';
const T2 = '2026-11-26T10:00:05.000Z';

describe('sends under an Idempotency-Key after an ambiguous write: cassandra', () => {
  after(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });

  it('the first try lands after its retry (on another node): one row, at the first try seq and time', async () => {
    const amb = ambiguousClient();
    const a = await open({ wrapClient: amb.wrap });
    const b = await open();
    const conv = await create(b);
    const byA = (await a.conversations.claim(ref(conv)))!;
    await a.messages.append(messageInput(byA, 1, 'ann', { at: T1 }));
    const id = randomUUID();
    amb.arm('late');
    await assert.rejects(a.messages.append(keyed(byA, 2, id, T1)), StoreUnavailableError);
    // The client retries on another node: its actor claims the conversation (fencing A) and numbers on.
    const byB = (await b.conversations.claim(ref(conv)))!;
    assert.equal(byB.last_seq, 16);
    const retried = await b.messages.append(keyed(byB, 17, id, T2));
    assert.equal(retried?.created, true, 'nothing was stored yet: the retry stores it');
    assert.equal(retried?.message.seq, 2, "at the seq the first try bound, not the retry's");
    assert.equal(retried?.message.created_at, T1);
    await amb.land();
    await b.messages.append(messageInput(byB, 18, 'bob', { at: T2 }));
    const rows = await history(b, conv);
    assert.deepEqual(rows.map((m) => [m.seq, m.message_id === id]), [[18, false], [2, true], [1, false]], 'stored once; 17 is a gap');
    assert.equal(rows[1]?.created_at, T1);
    assert.equal((await b.messages.get(ref(conv), id, null))?.seq, 2);
  });

  it('the first try was applied and its answer lost: the retry answers the stored message', async () => {
    const amb = ambiguousClient();
    const a = await open({ wrapClient: amb.wrap });
    const conv = await create(a);
    const byA = (await a.conversations.claim(ref(conv)))!;
    const id = randomUUID();
    amb.arm('applied');
    await assert.rejects(a.messages.append(keyed(byA, 1, id, T1)), StoreUnavailableError);
    const again = (await a.conversations.claim(ref(conv)))!; // the actor drops its state and re-activates
    const retried = await a.messages.append(keyed(again, again.last_seq + 1, id, T2));
    assert.deepEqual([retried?.created, retried?.message.seq, retried?.message.created_at], [false, 1, T1]);
    assert.deepEqual((await history(a, conv)).map((m) => m.seq), [1]);
  });

  it('a late landing of the first try does not undo an edit made after the retry', async () => {
    const amb = ambiguousClient();
    const a = await open({ wrapClient: amb.wrap });
    const conv = await create(a);
    const byA = (await a.conversations.claim(ref(conv)))!;
    const id = randomUUID();
    const now = new Date().toISOString();
    amb.arm('late');
    await assert.rejects(a.messages.append(keyed(byA, 1, id, now)), StoreUnavailableError);
    const again = (await a.conversations.claim(ref(conv)))!;
    assert.equal((await a.messages.append(keyed(again, again.last_seq + 1, id, new Date().toISOString())))?.message.seq, 1);
    await a.messages.edit({ ...w(again), message_id: id, body: 'edited' });
    await amb.land();
    const rows = await history(a, conv);
    assert.deepEqual(rows.map((m) => [m.seq, m.body, m.status]), [[1, 'edited', 'EDITED']]);
  });

  it('the same retry twice at once stores one row; a send without a key takes no LWT, one with a key one', async () => {
    const a = await open();
    const conv = await create(a);
    const byA = (await a.conversations.claim(ref(conv)))!;
    const before = a.statementCounts();
    await a.messages.append(messageInput(byA, 1, 'ann'));
    const plain = a.statementCounts();
    assert.equal(plain.lwt - before.lwt, 0);
    const id = randomUUID();
    await a.messages.append(keyed(byA, 2, id, T1));
    assert.equal(a.statementCounts().lwt - plain.lwt, 1, 'the bind');
    // Another node re-running the key while this one's write is done: answered, not written again.
    const b = await open();
    const byB = (await b.conversations.claim(ref(conv)))!;
    const [x, y] = await Promise.all([b.messages.append(keyed(byB, 17, id, T2)), b.messages.append(keyed(byB, 18, id, T2))]);
    assert.deepEqual([x?.created, x?.message.seq, y?.message.seq], [false, 2, 2]);
    assert.deepEqual((await history(b, conv)).map((m) => m.seq), [2, 1]);
  });
});

describe('an Idempotency-Key claim whose answer is lost: cassandra', () => {
  after(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });

  /** A client whose next claim insert is applied, then answered with `error`. */
  function lostClaim(error: () => Error): { wrap: (c: CqlClient) => CqlClient; arm(): void } {
    let armed = false;
    return {
      wrap: (c) => ({
        execute: async (q, p, o) => {
          if (!armed || !q.startsWith('INSERT INTO idempotency_keys')) return c.execute(q, p, o);
          armed = false;
          await c.execute(q, p, o);
          throw error();
        },
        batch: (q, o) => c.batch(q, o),
        shutdown: () => c.shutdown(),
      }),
      arm: () => void (armed = true),
    };
  }
  const key = (): { principal_key: string; idempotency_key: string; method_route: string } => ({ principal_key: 'user:ann', idempotency_key: randomUUID(), method_route: 'POST /m' });
  const by = { owner: 'node-a', live: ['node-a'] };

  it('a claim that failed but applied is let go of in the background: a retry takes it over, not idempotency_in_progress', async () => {
    const lost = lostClaim(() => new cassandra.errors.NoHostAvailableError({}));
    const a = await open({ wrapClient: lost.wrap });
    const k = key();
    const now = new Date().toISOString();
    lost.arm();
    await assert.rejects(a.idempotency.claim(k, 'h', by, now), StoreUnavailableError);
    // The retry comes later (its own time), to this same live process.
    const retry = (): ReturnType<CassandraChatStore['idempotency']['claim']> => a.idempotency.claim(k, 'h', by, new Date().toISOString());
    let answer = await retry();
    for (let i = 0; i < 50 && !answer.claimed; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await retry();
    }
    assert.deepEqual(answer, { claimed: true, created_at: now }, 'taken over, keeping the first claim time');
  });
});
