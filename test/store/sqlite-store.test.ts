/**
 * The store contract against the SQLite driver, and how the driver opens its file: the factory,
 * the exclusive and shared-file modes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { storeContract } from '../../src/store/contract.ts';
import { createStore, sqliteStorePath, StaleEpochError } from '../../src/store/index.ts';
import { SqliteChatStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-store');

storeContract('sqlite (writer thread)', () => createStore({ driver: 'sqlite', path: sqliteStorePath(dir()) }));
storeContract('sqlite, writes inline', () => createStore({ driver: 'sqlite', path: sqliteStorePath(dir()), writer: 'inline' }));
storeContract('sqlite, shared-file, 2 ms commit window', () =>
  createStore({ driver: 'sqlite', path: sqliteStorePath(dir()), mode: 'shared-file', groupCommit: { maxDelayMs: 2 } }),
);

describe('SQLite store: opening', () => {
  it('createStore opens ${dataDir}/chat.sqlite, creating the directory, with WAL and synchronous=FULL', async () => {
    const dataDir = path.join(dir(), 'nested', 'data');
    const store = await createStore({ driver: 'sqlite', path: sqliteStorePath(dataDir) });
    assert.equal(store.driver, 'sqlite');
    await store.close();
    const file = path.join(dataDir, 'chat.sqlite');
    assert.ok(fs.existsSync(file));
    const db = new Database(file, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal', 'WAL is persistent in the file');
    } finally {
      db.close();
    }
  });

  it('sets the pragmas it documents on its connection', () => {
    const store = new SqliteChatStore({ driver: 'sqlite', path: sqliteStorePath(dir()), busyTimeoutMs: 1234 });
    const db = (store as unknown as { db: Database.Database }).db;
    assert.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL');
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    assert.equal(db.pragma('busy_timeout', { simple: true }), 1234);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0, 'checkpoints run in the checkpointer thread');
    assert.ok(fs.existsSync(`${(store as unknown as { db: Database.Database }).db.name}.lock`), 'exclusive mode holds the lock file');
    void store.close();
  });

  it('exclusive mode: a second opener of the same file fails fast until the first closes', async () => {
    const file = sqliteStorePath(dir());
    const first = new SqliteChatStore({ driver: 'sqlite', path: file });
    assert.throws(() => new SqliteChatStore({ driver: 'sqlite', path: file, busyTimeoutMs: 50 }), /locked|busy/i);
    await first.close();
    const second = new SqliteChatStore({ driver: 'sqlite', path: file, busyTimeoutMs: 50 });
    await second.close();
  });

  it('shared-file mode: two stores on one file see each other and fence each other', async () => {
    const file = sqliteStorePath(dir());
    const a = new SqliteChatStore({ driver: 'sqlite', path: file, mode: 'shared-file' });
    const b = new SqliteChatStore({ driver: 'sqlite', path: file, mode: 'shared-file' });
    try {
      const ctx = { tenant_id: 't', application_id: 'app' };
      const conversation_id = '7d3c1b0e-6a55-4f0e-8e43-1f1b8b3c9a01';
      const { conversation } = await a.conversations.create({
        ...ctx, conversation_id, type: 'GROUP', name: 'g', description: null, created_by_user_id: 'ann', created_by_client_id: null,
        members: [{ member_id: '0f0e1c5e-4d8f-4a58-9a8e-0c2f5d9b7e11', user_id: 'ann', role: 'OWNER' }],
      });
      const msg = { ...ctx, conversation_id, sender_user_id: 'ann', sender_client_id: null, body: 'x', message_type: 'TEXT' as const };
      await a.messages.append({ ...msg, epoch: conversation.epoch, message_id: '3d9e7c1a-2b4f-4c8e-9a6d-5e1f0b2c3d41', seq: 1 });
      const taken = await b.conversations.claim({ ...ctx, conversation_id });
      assert.equal(taken?.last_seq, 1, 'b reads what a committed');
      await assert.rejects(
        a.messages.append({ ...msg, epoch: conversation.epoch, message_id: '3d9e7c1a-2b4f-4c8e-9a6d-5e1f0b2c3d42', seq: 2 }),
        StaleEpochError,
      );
      await b.messages.append({ ...msg, epoch: taken!.epoch, message_id: '3d9e7c1a-2b4f-4c8e-9a6d-5e1f0b2c3d43', seq: 2 });
      const page = await a.messages.list({ ...ctx, conversation_id, viewer_user_id: null, limit: 10 });
      assert.deepEqual(page?.items.map((m) => m.seq), [2, 1]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses an unknown mode or a bad group-commit setting', () => {
    const file = sqliteStorePath(dir());
    assert.throws(() => new SqliteChatStore({ driver: 'sqlite', path: file, mode: 'bogus' as 'exclusive' }), RangeError);
    assert.throws(() => new SqliteChatStore({ driver: 'sqlite', path: file, groupCommit: { maxOps: 0 } }), RangeError);
    // A failed open released the file's lock.
    const store = new SqliteChatStore({ driver: 'sqlite', path: file, busyTimeoutMs: 50 });
    void store.close();
  });
});

describe('SQLite store: idempotency rows from before owners (schema 3)', () => {
  it('a pending claim without an owner is a dead process\'s: taken over at once, created_at kept', async () => {
    const file = sqliteStorePath(dir());
    const store = await createStore({ driver: 'sqlite', path: file, writer: 'inline' });
    const key = { principal_key: 'user:t:ann', idempotency_key: 'k1', method_route: 'POST /x' };
    const at = new Date().toISOString();
    const db = new Database(file);
    try {
      db.prepare(`INSERT INTO idempotency_keys (principal_key, idempotency_key, method_route, request_hash, response_status, response_body, created_at)
        VALUES (?, ?, ?, 'h', NULL, NULL, ?)`).run(key.principal_key, key.idempotency_key, key.method_route, at);
    } finally {
      db.close();
    }
    const by = { owner: 'p1', live: ['p1'] };
    assert.deepEqual(await store.idempotency.claim(key, 'h', by), { claimed: true, created_at: at });
    assert.equal(await store.idempotency.complete(key, 'p1', 201, '{}'), true);
    await store.close();
  });
});
