/**
 * Group commit in the SQLite driver: concurrent writes share a transaction, every caller is
 * answered only after the commit, one failing op fails alone, and a dead transaction fails all.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { WriteBatcher } from '../../src/store/sqlite/batcher.ts';
import { SqliteChatStore, sqliteStorePath } from '../../src/store/sqlite/sqlite-store.ts';
import type { ConversationRecord } from '../../src/store/types.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-group-commit');
const ctx = { tenant_id: 'tenant-gc', application_id: 'app-1' };

async function openWithConversation(options: Partial<ConstructorParameters<typeof SqliteChatStore>[0]> = {}): Promise<{
  store: SqliteChatStore;
  file: string;
  conv: ConversationRecord;
}> {
  const file = sqliteStorePath(dir());
  const store = new SqliteChatStore({ driver: 'sqlite', path: file, ...options });
  const { conversation } = await store.conversations.create({
    ...ctx, conversation_id: randomUUID(), type: 'GROUP', name: 'g', description: null, created_by_user_id: 'ann', created_by_client_id: null,
    members: [{ member_id: randomUUID(), user_id: 'ann', role: 'OWNER' }],
  });
  return { store, file, conv: conversation };
}

function append(store: SqliteChatStore, conv: ConversationRecord, seq: number, message_id = randomUUID()) {
  return store.messages.append({
    ...ctx, conversation_id: conv.conversation_id, epoch: conv.epoch, message_id, seq, sender_user_id: 'ann', sender_client_id: null, body: `m${seq}`, message_type: 'TEXT',
  });
}

describe('SQLite group commit', () => {
  it('N concurrent sends commit in far fewer than N transactions, each acknowledged only once committed', async () => {
    const { store, file, conv } = await openWithConversation({ mode: 'shared-file' });
    // An independent connection sees only what is committed: each acknowledgement must find its row.
    const observer = new Database(file, { readonly: true });
    const committed = observer.prepare('SELECT count(*) AS n FROM messages WHERE message_id = ?').pluck();
    try {
      const before = store.stats();
      const ids = Array.from({ length: 200 }, () => randomUUID());
      await Promise.all(
        ids.map((id, i) =>
          append(store, conv, i + 1, id).then(() => assert.equal(committed.get(id), 1, `message ${i + 1} acknowledged before commit`)),
        ),
      );
      const after = store.stats();
      assert.equal(after.ops - before.ops, 200);
      assert.ok(after.transactions - before.transactions <= 2, `${after.transactions - before.transactions} transactions for 200 sends`);
    } finally {
      observer.close();
      await store.close();
    }
  });

  it('no batch exceeds maxOps', async () => {
    const { store, conv } = await openWithConversation({ groupCommit: { maxOps: 64 } });
    try {
      await Promise.all(Array.from({ length: 300 }, (_, i) => append(store, conv, i + 1)));
      const stats = store.stats();
      assert.equal(stats.largestBatch, 64);
      assert.ok(stats.transactions >= 5);
      // Each transaction's duration lands in exactly one bucket (the metrics' histogram).
      assert.equal(stats.commitBuckets.reduce((a, b) => a + b, 0), stats.transactions);
      assert.ok(stats.commitSeconds > 0);
      assert.equal(store.writesInFlight(), 0);
    } finally {
      await store.close();
    }
  });

  it('with a commit window, writes from several event-loop turns share one transaction', async () => {
    const { store, conv } = await openWithConversation({ groupCommit: { maxDelayMs: 200 } });
    try {
      const before = store.stats().transactions;
      const pending = [];
      for (let i = 0; i < 5; i += 1) {
        pending.push(append(store, conv, i + 1));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(pending);
      assert.equal(store.stats().transactions - before, 1);
    } finally {
      await store.close();
    }
  });
});

describe('WriteBatcher', () => {
  function table(): Database.Database {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    return db;
  }

  it('rolls back only the failing op (savepoint) and answers each caller its own outcome', async () => {
    const db = table();
    const batcher = new WriteBatcher(db);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    const results = await Promise.allSettled([
      batcher.run(() => insert.run('a', 1).changes),
      batcher.run(() => {
        insert.run('b', 2); // undone with its op
        insert.run('a', 3); // primary key violation
      }),
      batcher.run(() => {
        throw new Error('refused by logic');
      }),
      batcher.run(() => insert.run('c', 4).changes),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    assert.deepEqual(db.prepare('SELECT k, v FROM t ORDER BY k').all(), [{ k: 'a', v: 1 }, { k: 'c', v: 4 }]);
    const { commitBuckets, commitSeconds, ...counts } = batcher.stats;
    assert.deepEqual(counts, { transactions: 1, ops: 4, failedOps: 2, largestBatch: 4, retriedBatches: 1 });
    assert.equal(commitBuckets.reduce((a, b) => a + b, 0), 1, 'the retried transaction is timed once');
    assert.ok(commitSeconds > 0);
    db.close();
  });

  it('runs each op once when none throws (no savepoints), and again from a clean slate when one does', async () => {
    const db = table();
    const batcher = new WriteBatcher(db);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    const runs = { a: 0, b: 0, c: 0 };
    await Promise.all([batcher.run(() => (runs.a++, insert.run('a', 1))), batcher.run(() => (runs.b++, insert.run('b', 2)))]);
    assert.deepEqual(runs, { a: 1, b: 1, c: 0 });
    assert.equal(batcher.stats.retriedBatches, 0);
    // The second batch: c's first run is undone with the whole transaction, then it runs again.
    const results = await Promise.allSettled([
      batcher.run(() => (runs.c++, insert.run('c', 3))),
      batcher.run(() => insert.run('a', 9)), // primary key violation
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected']);
    assert.deepEqual(runs, { a: 1, b: 1, c: 2 });
    assert.equal(batcher.stats.retriedBatches, 1);
    assert.deepEqual(db.prepare('SELECT k, v FROM t ORDER BY k').all(), [{ k: 'a', v: 1 }, { k: 'b', v: 2 }, { k: 'c', v: 3 }]);
    db.close();
  });

  it('when SQLite aborts the whole transaction, every op of the batch is rejected and nothing is kept', async () => {
    const db = table();
    const batcher = new WriteBatcher(db);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    const rollback = db.prepare('ROLLBACK');
    const results = await Promise.allSettled([
      batcher.run(() => insert.run('a', 1)),
      batcher.run(() => {
        rollback.run(); // what SQLITE_FULL or SQLITE_IOERR do to a transaction
        throw new Error('disk full');
      }),
      batcher.run(() => insert.run('b', 2)),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'rejected']);
    assert.deepEqual(db.prepare('SELECT * FROM t').all(), []);
    assert.equal(db.inTransaction, false);
    // The batcher keeps working afterwards.
    await batcher.run(() => insert.run('c', 3));
    assert.deepEqual(db.prepare('SELECT k FROM t').all(), [{ k: 'c' }]);
    db.close();
  });

  it('runs ops in call order and refuses new ones after close, committing the queued ones', async () => {
    const db = table();
    const batcher = new WriteBatcher(db);
    const order: string[] = [];
    const a = batcher.run(() => order.push('a'));
    const b = batcher.run(() => order.push('b'));
    batcher.close();
    await Promise.all([a, b]);
    assert.deepEqual(order, ['a', 'b']);
    await assert.rejects(batcher.run(() => 1), /closed/);
    db.close();
  });
  it('with minIntervalMs, a commit after a quiet moment goes at once, and one that comes sooner waits for the interval', async () => {
    const db = table();
    const batcher = new WriteBatcher(db, { minIntervalMs: 150 });
    const ins = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
    const t0 = performance.now();
    await batcher.run(() => ins.run('a', 1));
    const first = performance.now() - t0;
    assert.ok(first < 100, `the first commit is not held back (${first.toFixed(1)} ms)`);
    // Within the interval: both wait for it, then share one transaction.
    const b = batcher.run(() => ins.run('b', 2));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const c = batcher.run(() => ins.run('c', 3));
    await Promise.all([b, c]);
    const second = performance.now() - t0;
    assert.ok(second >= 140, `the next commit started an interval after the first (${second.toFixed(1)} ms)`);
    assert.equal(batcher.stats.transactions, 2);
    assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), 3);
    // maxOps still flushes at once, interval or not.
    const full = new WriteBatcher(db, { minIntervalMs: 1000, maxOps: 2 });
    await full.run(() => ins.run('d', 4));
    const t1 = performance.now();
    await Promise.all([full.run(() => ins.run('e', 5)), full.run(() => ins.run('f', 6))]);
    assert.ok(performance.now() - t1 < 500, 'a full batch does not wait');
    assert.throws(() => new WriteBatcher(db, { minIntervalMs: -1 }), RangeError);
    assert.throws(() => new WriteBatcher(db, { minIntervalMs: 5000 }), RangeError);
    db.close();
  });
});
