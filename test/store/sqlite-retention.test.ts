/**
 * Retention in the SQLite driver (migration 003): a walk over the tenant's conversations in short
 * transactions, each conversation's oldest messages up to the first one not expired.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createStore, sqliteStorePath } from '../../src/store/index.ts';
import { createConversation, send, w, type TestKit } from '../../src/store/contract/fixtures.ts';
import type { SqliteChatStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-retention');
const DAY = 24 * 60 * 60;

async function withKit(body: (kit: TestKit, store: SqliteChatStore) => Promise<void>): Promise<void> {
  const store = (await createStore({ driver: 'sqlite', path: sqliteStorePath(dir()) })) as SqliteChatStore;
  const at = (s: number): string => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
  let n = 0;
  const kit: TestKit = { store, ctx: { tenant_id: 'acme', application_id: 'app-1' }, tick: () => at((n += 1)), at };
  try {
    await body(kit, store);
  } finally {
    await store.close();
  }
}

const seqs = async (kit: TestKit, conversation_id: string): Promise<number[]> =>
  (await kit.store.messages.list({ ...kit.ctx, conversation_id, viewer_user_id: null, limit: 100 }))!.items.map((m) => m.seq).sort((a, b) => a - b);

describe('SQLite retention', () => {
  it('walks every conversation of the tenant across many short transactions, deleted conversations included', async () => {
    await withKit(async (kit, store) => {
      const convs = [];
      for (let i = 0; i < 300; i += 1) {
        const conv = await createConversation(kit, ['ann'], { at: kit.at(0) });
        await send(kit, conv, 1, 'ann', { at: kit.at(1) }); // expired
        await send(kit, conv, 2, 'ann', { at: kit.at(10 * DAY) }); // kept
        convs.push(conv);
      }
      const gone = await createConversation(kit, ['ann'], { at: kit.at(0) });
      await send(kit, gone, 1, 'ann', { at: kit.at(1) });
      await kit.store.conversations.softDelete({ ...w(gone) });
      const before = store.stats().transactions;
      const deleted = await kit.store.messages.deleteExpired({ tenant_id: 'acme', days: 5, at: kit.at(10 * DAY + 60), batch_size: 50 });
      assert.equal(deleted, 301);
      assert.ok(store.stats().transactions - before >= 7, 'batches of 50 rows and of 256 conversations at most');
      for (const conv of [convs[0]!, convs[150]!, convs[299]!]) assert.deepEqual(await seqs(kit, conv.conversation_id), [2]);
      assert.equal(await kit.store.messages.deleteExpired({ tenant_id: 'acme', days: 5, at: kit.at(10 * DAY + 60) }), 0, 'nothing left to delete');
    });
  });

  it('stops at the first message not expired: one stamped earlier by a clock step back waits for a later run', async () => {
    await withKit(async (kit) => {
      const conv = await createConversation(kit, ['ann'], { at: kit.at(0) });
      await send(kit, conv, 1, 'ann', { at: kit.at(1) });
      await send(kit, conv, 2, 'ann', { at: kit.at(6 * DAY) });
      await send(kit, conv, 3, 'ann', { at: kit.at(2) }); // the clock stepped back
      await send(kit, conv, 4, 'ann', { at: kit.at(6 * DAY + 1) });
      assert.equal(await kit.store.messages.deleteExpired({ tenant_id: 'acme', days: 5, at: kit.at(6 * DAY) }), 1);
      assert.deepEqual(await seqs(kit, conv.conversation_id), [2, 3, 4]);
      // Once seq 2 expires too, seq 3 goes with it.
      assert.equal(await kit.store.messages.deleteExpired({ tenant_id: 'acme', days: 5, at: kit.at(11 * DAY + 1) }), 2);
      assert.deepEqual(await seqs(kit, conv.conversation_id), [4]);
    });
  });
});
