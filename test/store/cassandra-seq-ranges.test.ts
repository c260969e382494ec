/**
 * Seq ranges on a real Cassandra (src/store/cassandra/seq-leases.ts): no Paxos round per
 * message, and still never one seq for two messages, with several stores (several nodes)
 * competing for one conversation, a fenced-out owner whose write was already under way, a crash
 * in the middle of a range, the release at passivation, rows of schema version 1, and two actor
 * hosts sending to one conversation at once. On a node of its own (test/helpers/cassandra.ts), or
 * on CASSANDRA_CONTACT_POINTS when set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import cassandra from 'cassandra-driver';
import { ActorHost, ActorUnavailableError, type ChatBus } from '../../src/actors/index.ts';
import { createBus } from '../../src/bus/index.ts';
import type { CassandraChatStore } from '../../src/store/cassandra/cassandra-store.ts';
import type { CqlClient } from '../../src/store/cassandra/cql.ts';
import { StaleEpochError, type ConversationRecord, type MessagePosition } from '../../src/store/index.ts';
import { messageInput, ref, w } from '../../src/store/contract/fixtures.ts';
import { useCassandraStores } from '../helpers/cassandra.ts';

const { config, open, opened } = useCassandraStores('chat_seq_ranges');

const ctx = (): { tenant_id: string; application_id: string } => ({ tenant_id: `t-${randomUUID()}`, application_id: 'app-1' });

async function create(store: CassandraChatStore, users = ['ann', 'bob']): Promise<ConversationRecord> {
  const { conversation } = await store.conversations.create({
    ...ctx(), conversation_id: randomUUID(), type: 'GROUP', name: 'g', description: null, created_by_user_id: users[0]!, created_by_client_id: null,
    members: users.map((user_id) => ({ member_id: randomUUID(), user_id, role: 'MEMBER' as const })),
  });
  return conversation;
}

async function seqs(store: CassandraChatStore, conv: ConversationRecord, limit = 100): Promise<number[]> {
  const out: number[] = [];
  let position: MessagePosition | null = null;
  for (;;) {
    const page = await store.messages.list({ ...ref(conv), viewer_user_id: null, limit, after: position });
    assert.ok(page);
    out.push(...page.items.map((m) => m.seq));
    if (!page.next) return out;
    position = page.next;
  }
}

/** A client whose next batch waits until `release()`: a write already past its fence check. */
function holdingClient(): { wrap: (c: CqlClient) => CqlClient; hold(): Promise<void>; release(): void } {
  let armed: { reached: () => void; open: Promise<void> } | null = null;
  let release = (): void => {};
  return {
    wrap: (c) => ({
      execute: (q, p, o) => c.execute(q, p, o),
      shutdown: () => c.shutdown(),
      batch: async (q, o) => {
        const gate = armed;
        armed = null;
        if (gate) {
          gate.reached();
          await gate.open;
        }
        return c.batch(q, o);
      },
    }),
    hold() {
      return new Promise<void>((reached) => {
        armed = { reached, open: new Promise<void>((resolve) => (release = resolve)) };
      });
    },
    release: () => release(),
  };
}

describe('seq ranges: cassandra', () => {
  after(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });

  it('appends under a claim take one LWT per range, not one per message, and pipeline in order', async () => {
    const store = await open();
    const conv = (await store.conversations.claim(ref(await create(store))))!;
    const before = store.statementCounts();
    for (let seq = 1; seq <= 100; seq += 1) assert.equal((await store.messages.append(messageInput(conv, seq, 'ann')))?.created, true);
    const counts = store.statementCounts();
    assert.equal(counts.lwt - before.lwt, 2, 'ranges of 16 (the claim), 32, 64: two more LWTs for 100 messages');
    assert.equal(counts.batches - before.batches, 100);
    const burst = await Promise.all(Array.from({ length: 200 }, (_, i) => store.messages.append(messageInput(conv, 101 + i, 'bob'))));
    assert.ok(burst.every((r) => r?.created));
    assert.deepEqual(await seqs(store, conv), Array.from({ length: 300 }, (_, i) => 300 - i));
    assert.equal((await store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 300);
  });

  it('two stores competing for a conversation: each claim fences the other, and their seqs never meet', async () => {
    const a = await open();
    const b = await open();
    const conv = await create(a);
    const byA = (await a.conversations.claim(ref(conv)))!;
    for (const seq of [1, 2, 3]) await a.messages.append(messageInput(byA, seq, 'ann'));
    const byB = (await b.conversations.claim(ref(conv)))!;
    assert.equal(byB.last_seq, 16, 'B numbers after the whole range A holds');
    await assert.rejects(a.messages.append(messageInput(byA, 4, 'ann')), StaleEpochError);
    for (const seq of [17, 18]) await b.messages.append(messageInput(byB, seq, 'bob'));
    const again = (await a.conversations.claim(ref(conv)))!;
    assert.equal(again.last_seq, 32);
    await a.messages.append(messageInput(again, 33, 'ann'));
    await assert.rejects(b.messages.append(messageInput(byB, 19, 'bob')), StaleEpochError);
    assert.deepEqual(await seqs(b, conv), [33, 18, 17, 3, 2, 1]);
    assert.equal((await b.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 33);
  });

  it('a fenced-out owner whose write was past its fence lands in its own range, below the new owner', async () => {
    const hold = holdingClient();
    const a = await open({ wrapClient: hold.wrap });
    const b = await open();
    const conv = await create(b);
    const byA = (await a.conversations.claim(ref(conv)))!;
    await a.messages.append(messageInput(byA, 1, 'ann'));
    const held = hold.hold();
    const late = a.messages.append(messageInput(byA, 2, 'ann', { body: 'late' }));
    await held; // A read the row (epoch still its own) and its batch is on the way
    const byB = (await b.conversations.claim(ref(conv)))!;
    assert.equal(byB.last_seq, 16);
    await b.messages.append(messageInput(byB, 17, 'bob'));
    hold.release();
    assert.equal((await late)?.created, true, 'the write in flight is not lost');
    await assert.rejects(a.messages.append(messageInput(byA, 3, 'ann')), StaleEpochError, 'the next one is fenced');
    assert.deepEqual(await seqs(b, conv), [17, 2, 1]);
    assert.equal((await b.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 17, 'the late head (2) does not move last_seq back');
  });

  it('a crash in the middle of a range leaves a gap, never a duplicate; history and unread counts skip it', async () => {
    const a = await open();
    const conv = await create(a);
    const byA = (await a.conversations.claim(ref(conv)))!;
    for (const seq of [1, 2, 3]) await a.messages.append(messageInput(byA, seq, 'ann'));
    // A dies here: no release. Its seqs 4..16 are never written by anyone.
    const b = await open();
    const byB = (await b.conversations.claim(ref(conv)))!;
    assert.equal(byB.last_seq, 16);
    await assert.rejects(b.messages.append(messageInput(byB, 3, 'bob')), { code: 'seq_conflict' }, 'a seq of the dead owner');
    for (const seq of [17, 18]) await b.messages.append(messageInput(byB, seq, 'ann'));
    assert.deepEqual(await seqs(b, conv, 2), [18, 17, 3, 2, 1], 'pages of 2 across the gap');
    await b.readState.markRead({ ...w(byB), user_id: 'bob', seq: 2 });
    assert.deepEqual(await b.readState.get(ref(conv), 'bob'), { last_read_seq: 2, unread_count: 3, has_unread: true });
    const marked = await b.readState.markRead({ ...w(byB), user_id: 'bob', seq: 99 });
    assert.equal(marked?.last_read_seq, 18, 'clamped to the last message, not to the reserved end');
  });

  it('release hands the unused seqs back, so the next owner continues without a gap; a stale release is a no-op', async () => {
    const a = await open();
    const b = await open();
    const conv = await create(a);
    const byA = (await a.conversations.claim(ref(conv)))!;
    for (const seq of [1, 2, 3]) await a.messages.append(messageInput(byA, seq, 'ann'));
    await a.conversations.release(w(byA));
    assert.equal(a.leases.size, 0);
    const byB = (await b.conversations.claim(ref(conv)))!;
    assert.equal(byB.last_seq, 3);
    await b.messages.append(messageInput(byB, 4, 'bob'));
    await a.conversations.release(w(byA)); // long gone: nothing to do, and no error
    await b.messages.append(messageInput(byB, 5, 'bob'));
    assert.deepEqual(await seqs(b, conv), [5, 4, 3, 2, 1]);
  });

  it('a writer that presents an epoch it did not claim here takes its first range from the reserved end', async () => {
    const a = await open();
    const b = await open();
    const conv = await create(a);
    const byA = (await a.conversations.claim(ref(conv)))!;
    await a.messages.append(messageInput(byA, 1, 'ann'));
    const outside = { ...byA, epoch: byA.epoch + 5 };
    await assert.rejects(b.messages.append(messageInput(outside, 2, 'bob')), { code: 'seq_conflict' }, 'seq 2 is in the range A holds');
    assert.equal((await b.messages.append(messageInput(outside, 17, 'bob')))?.created, true);
    await assert.rejects(a.messages.append(messageInput(byA, 2, 'ann')), StaleEpochError, 'the higher epoch fenced A');
    assert.deepEqual(await seqs(a, conv), [17, 1]);
  });

  it('a row of schema version 1 (no head) keeps its last_seq through its first claim', async () => {
    const store = await open();
    const conv = await create(store);
    const { contactPoints, localDataCenter, keyspace } = config();
    const raw = new cassandra.Client({ contactPoints, localDataCenter, keyspace });
    try {
      // What version 1 left after five appends: last_seq 5 and no head columns.
      const r = await raw.execute('UPDATE conversations SET last_seq = ? WHERE conversation_id = ? IF epoch = ?', [5, conv.conversation_id, conv.epoch], { prepare: true });
      assert.equal(r.rows[0]?.['[applied]'], true);
    } finally {
      await raw.shutdown();
    }
    assert.equal((await store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 5);
    const claimed = (await store.conversations.claim(ref(conv)))!;
    assert.equal(claimed.last_seq, 5);
    assert.equal((await store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 5, 'not the reserved end (21)');
    await store.messages.append(messageInput(claimed, 6, 'ann'));
    assert.equal((await store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 6);
  });

  describe('two actor hosts on two stores sending to one conversation at once', () => {
    let hosts: Array<{ host: ActorHost; bus: ChatBus; store: CassandraChatStore }> = [];
    before(async () => {
      hosts = await Promise.all(
        [0, 1].map(async () => {
          const store = await open({ seqRanges: { first: 4, max: 8 } });
          const bus = createBus({ driver: 'local' }) as ChatBus;
          return { host: new ActorHost({ store, bus, enqueuePush: false }), bus, store };
        }),
      );
    });
    after(async () => {
      for (const h of hosts) {
        await h.host.close();
        await h.bus.close();
      }
    });

    it('never assign one seq twice, lose nothing acknowledged, and hand over without a gap after a passivation', async () => {
      const [one, two] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
      const context = ctx();
      const { conversation } = await one.host.createConversation({
        ...context, type: 'GROUP', name: 'g', description: null, created_by_user_id: 'ann', created_by_client_id: null, member_user_ids: ['ann', 'bob'],
      });
      const cref = { ...context, conversation_id: conversation.conversation_id };
      const acknowledged: string[] = [];
      let fenced = 0;
      const send = async (h: ActorHost, i: number): Promise<void> => {
        const message_id = randomUUID();
        for (let attempt = 0; ; attempt += 1) {
          try {
            const r = await h.sendMessage(cref, { message_id, sender_user_id: i % 2 ? 'ann' : 'bob', sender_client_id: null, body: `m${i}`, message_type: 'TEXT' });
            acknowledged.push(r.message.message_id);
            return;
          } catch (error) {
            // As the router does: retry the fenced call (same message_id), after a jittered pause.
            if (!(error instanceof ActorUnavailableError) || attempt > 100) throw error;
            fenced += 1;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
          }
        }
      };
      for (let round = 0; round < 3; round += 1) {
        await Promise.all(Array.from({ length: 40 }, (_, i) => send(i % 2 ? one.host : two.host, round * 100 + i)));
      }
      assert.ok(fenced > 0, 'the hosts took the conversation from each other');
      const page = await one.store.messages.list({ ...cref, viewer_user_id: null, limit: 100 });
      const all = [...(page?.items ?? [])];
      for (let next = page?.next ?? null; next; ) {
        const more = await one.store.messages.list({ ...cref, viewer_user_id: null, limit: 100, after: next });
        all.push(...(more?.items ?? []));
        next = more?.next ?? null;
      }
      assert.equal(new Set(all.map((m) => m.seq)).size, all.length, 'no seq twice');
      assert.deepEqual(new Set(all.map((m) => m.message_id)), new Set(acknowledged), 'every acknowledged send stored, once');
      assert.equal(all.length, 120);
      // A clean handover: the owner passivates (releasing its unused seqs), the other continues at +1.
      await send(one.host, 1000);
      await one.host.passivate(cref.conversation_id);
      await two.host.passivate(cref.conversation_id);
      const last = (await one.store.conversations.get(cref, { kind: 'machine' }, 0))!.last_seq;
      const r = await two.host.sendMessage(cref, { sender_user_id: 'ann', sender_client_id: null, body: 'after', message_type: 'TEXT' });
      assert.equal(r.message.seq, last + 1);
    });

    it('keyed sends and their retries at once on one host (ids looked up before the mailbox): each id stored once, every answer the stored message', async () => {
      const [one] = hosts as [(typeof hosts)[0]];
      const context = ctx();
      const { conversation } = await one.host.createConversation({
        ...context, type: 'GROUP', name: 'k', description: null, created_by_user_id: 'ann', created_by_client_id: null, member_user_ids: ['ann', 'bob'],
      });
      const cref = { ...context, conversation_id: conversation.conversation_id };
      const ids = Array.from({ length: 30 }, () => randomUUID());
      const send = (message_id: string, i: number) =>
        one.host.sendMessage(cref, { message_id, sender_user_id: 'ann', sender_client_id: null, body: `k${i}`, message_type: 'TEXT' });
      // Every id three times: twice at once, once more after a random pause (often after the first commit).
      const tries = ids.flatMap((id, i) => [send(id, i), send(id, i), new Promise((r) => setTimeout(r, Math.random() * 30)).then(() => send(id, i))]);
      const answers = await Promise.all(tries);
      for (let i = 0; i < ids.length; i += 1) {
        const mine = answers.slice(i * 3, i * 3 + 3);
        assert.equal(mine.filter((a) => a.created).length, 1, `id ${i}: created once`);
        for (const a of mine) assert.deepEqual({ id: a.message.message_id, seq: a.message.seq, body: a.message.body }, { id: ids[i], seq: mine[0]!.message.seq, body: `k${i}` });
      }
      const page = await one.store.messages.list({ ...cref, viewer_user_id: null, limit: 100 });
      assert.deepEqual(new Set(page!.items.map((m) => m.message_id)), new Set(ids));
      assert.equal(page!.items.length, ids.length, 'no id stored twice');
    });
  });
});
