/**
 * The SQLite driver's writer thread (writer-thread.ts): what crosses between the threads and what
 * happens at the edges — errors keep their classes, the lock and open failures, close with calls
 * in flight, a worker that dies, arguments that cannot be copied. The store contract and the memo
 * tests run against it too (sqlite-store.test.ts, sqlite-memos.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createStore, sqliteStorePath, StaleEpochError, StoreClosedError, type ChatStore } from '../../src/store/index.ts';
import { loadMigrations } from '../../src/store/sqlite/migrations.ts';
import { SqliteChatStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ThreadedSqliteStore } from '../../src/store/sqlite/writer-thread.ts';
import { createConversation, send, w, type TestKit } from '../../src/store/contract/fixtures.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-writer-thread');

function kitOf(store: ChatStore): TestKit {
  let n = 0;
  const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
  return { store, ctx: { tenant_id: 'acme', application_id: 'app-1' }, tick: () => at((n += 1)), at };
}

const workerOf = (store: ThreadedSqliteStore): Worker => (store as unknown as { worker: Worker }).worker;

/** A threaded store on a fresh file for `body`, closed afterwards. */
async function withStore(body: (store: ThreadedSqliteStore, kit: TestKit) => Promise<void>): Promise<void> {
  const store = await ThreadedSqliteStore.open({ driver: 'sqlite', path: sqliteStorePath(dir()) });
  try {
    await body(store, kitOf(store));
  } finally {
    await store.close();
  }
}

describe('SQLite writer thread', () => {
  it('is what createStore opens by default; `inline` opens the single-connection store', async () => {
    const threaded = await createStore({ driver: 'sqlite', path: sqliteStorePath(dir()) });
    const inline = await createStore({ driver: 'sqlite', path: sqliteStorePath(dir()), writer: 'inline' });
    try {
      assert.ok(threaded instanceof ThreadedSqliteStore);
      assert.ok(inline instanceof SqliteChatStore);
      assert.deepEqual(threaded.appliedMigrations, loadMigrations().map((m) => m.name), 'the writer applied the migrations');
    } finally {
      await threaded.close();
      await inline.close();
    }
  });

  it('errors keep their class and fields across the threads', async () => {
    await withStore(async (store, kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const claimed = (await store.conversations.claim({ ...kit.ctx, conversation_id: conv.conversation_id }))!;
      const stale = await send(kit, conv, 1, 'ann').then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(stale instanceof StaleEpochError, String(stale));
      assert.deepEqual([stale.code, stale.conversation_id, stale.given_epoch, stale.current_epoch], ['stale_epoch', conv.conversation_id, conv.epoch, claimed.epoch]);
      assert.match(stale.message, /is stale/);
      await assert.rejects(store.settings.update('acme', { message_retention_days: -1 }), RangeError, 'a caller bug stays a RangeError');
      // Nothing of a refused write was kept, and the next write goes through.
      await send(kit, { ...conv, epoch: claimed.epoch }, 1, 'ann');
      assert.equal((await store.conversations.get({ ...kit.ctx, conversation_id: conv.conversation_id }, { kind: 'machine' }, 0))?.last_seq, 1);
    });
  });

  it('reads on the opening thread see every acknowledged write; the writer reports its group commits', async () => {
    await withStore(async (store, kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const sends = Array.from({ length: 40 }, (_, i) => send(kit, conv, i + 1, 'ann'));
      await Promise.all(sends);
      const page = await store.messages.list({ ...kit.ctx, conversation_id: conv.conversation_id, viewer_user_id: 'ann', limit: 100 });
      assert.deepEqual(page?.items.map((m) => m.seq), Array.from({ length: 40 }, (_, i) => 40 - i));
      const stats = store.stats();
      assert.equal(stats.ops, 41, 'the create and 40 appends');
      assert.ok(stats.transactions < stats.ops, `calls of one turn share a commit (${stats.transactions} transactions)`);
      assert.equal(stats.commitBuckets.reduce((a, b) => a + b, 0), stats.transactions, 'every commit timed once');
      assert.ok(stats.commitSeconds > 0);
      assert.equal(store.writesInFlight(), 0, 'every write answered');
    });
  });

  it('the reading connection refuses writes', async () => {
    await withStore(async (store) => {
      const reader = (store as unknown as { reader: { db?: unknown } }).reader as unknown as { db: Database.Database };
      assert.throws(() => reader.db.prepare("INSERT INTO tenant_settings (tenant_id, message_retention_days, updated_at) VALUES ('x', 1, 'now')").run(), /readonly|query_only|attempt to write/i);
    });
  });

  it('exclusive mode: the opening thread holds the lock; a failed open releases it', async () => {
    const file = sqliteStorePath(dir());
    const first = await ThreadedSqliteStore.open({ driver: 'sqlite', path: file });
    await assert.rejects(ThreadedSqliteStore.open({ driver: 'sqlite', path: file, busyTimeoutMs: 50 }), /locked|busy|in use/i);
    assert.throws(() => new SqliteChatStore({ driver: 'sqlite', path: file, busyTimeoutMs: 50 }), /locked|busy|in use/i);
    await first.close();

    const broken = [...loadMigrations(), { version: 999, name: '999_broken.sql', sql: 'CREATE TABLE oops (', checksum: 'x' }];
    await assert.rejects(ThreadedSqliteStore.open({ driver: 'sqlite', path: file }, { migrations: broken }), /syntax|incomplete/i, 'the writer\'s open error, rebuilt');
    const again = await ThreadedSqliteStore.open({ driver: 'sqlite', path: file, busyTimeoutMs: 50 });
    await again.close();
  });

  it('close commits and answers the calls made before it, then refuses', async () => {
    const file = sqliteStorePath(dir());
    const store = await ThreadedSqliteStore.open({ driver: 'sqlite', path: file });
    let lost = 0;
    store.onWriterLost(() => (lost += 1));
    const kit = kitOf(store);
    const conv = await createConversation(kit, ['ann']);
    const inFlight = Array.from({ length: 20 }, (_, i) => send(kit, conv, i + 1, 'ann'));
    const closed = store.close();
    await Promise.all(inFlight);
    await closed;
    await assert.rejects(send(kit, conv, 21, 'ann'), StoreClosedError);
    await assert.rejects(store.messages.list({ ...kit.ctx, conversation_id: conv.conversation_id, viewer_user_id: null, limit: 5 }), StoreClosedError);
    await store.close(); // twice is fine
    assert.equal(lost, 0, 'closing is not losing the writer');

    const reopened = await createStore({ driver: 'sqlite', path: file, writer: 'inline' });
    try {
      assert.equal((await reopened.conversations.get({ ...kit.ctx, conversation_id: conv.conversation_id }, { kind: 'machine' }, 0))?.last_seq, 20);
    } finally {
      await reopened.close();
    }
  });

  it('a writer that dies fails its pending and later writes; reads go on; close still releases the file', async () => {
    const file = sqliteStorePath(dir());
    const store = await ThreadedSqliteStore.open({ driver: 'sqlite', path: file });
    const kit = kitOf(store);
    const lost: Error[] = [];
    store.onWriterLost((error) => lost.push(error));
    const conv = await createConversation(kit, ['ann']);
    const pending = send(kit, conv, 1, 'ann');
    await workerOf(store).terminate();
    assert.match(lost.map((e) => e.message).join(), /writer thread exited/, 'the owner is told (a node exits)');
    await assert.rejects(pending, /writer thread exited/);
    await assert.rejects(store.members.add({ ...w(conv), user_id: 'bob', role: 'MEMBER', member_id: 'm-bob' }), /writer thread exited/);
    assert.ok(await store.conversations.get({ ...kit.ctx, conversation_id: conv.conversation_id }, { kind: 'machine' }, 0), 'reads still answer');
    await store.close();
    const next = await ThreadedSqliteStore.open({ driver: 'sqlite', path: file, busyTimeoutMs: 50 });
    await next.close();
  });

  it('an argument that cannot be copied fails its own call only', async () => {
    await withStore(async (store) => {
      const bad = store.settings.update('acme', { message_retention_days: 3, oops: () => 1 } as unknown as { message_retention_days: number });
      const good = store.settings.update('beta', { message_retention_days: 4 });
      await assert.rejects(bad, /could not be cloned/i);
      assert.equal((await good).message_retention_days, 4);
    });
  });
});
