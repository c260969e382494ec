/**
 * WAL checkpoints run in the checkpointer thread: the node's connection never checkpoints
 * (wal_autocheckpoint=0), yet pages reach the main file and the WAL starts over instead of
 * growing with every commit.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SqliteChatStore } from '../../src/store/sqlite/sqlite-store.ts';
import { sqliteStorePath } from '../../src/store/index.ts';

test('the checkpointer folds committed pages into the main file while the node keeps writing', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-checkpoint-'));
  const file = sqliteStorePath(dir);
  const store = new SqliteChatStore({ driver: 'sqlite', path: file, checkpointIntervalMs: 50 });
  try {
    const ctx = { tenant_id: 't', application_id: 'a' };
    const conversation_id = randomUUID();
    await store.conversations.create({ ...ctx, conversation_id, type: 'GROUP', name: 'c', description: null, created_by_user_id: 'u', created_by_client_id: null, members: [{ member_id: randomUUID(), user_id: 'u', role: 'OWNER' }] });
    await new Promise((r) => setTimeout(r, 200));
    const mainBefore = fs.statSync(file).size;
    let seq = 0;
    let walPeak = 0;
    for (let round = 0; round < 20; round += 1) {
      await Promise.all(
        Array.from({ length: 100 }, () => {
          seq += 1;
          return store.messages.append({ ...ctx, conversation_id, epoch: 1, message_id: randomUUID(), seq, sender_user_id: 'u', sender_client_id: null, body: 'x'.repeat(500), message_type: 'TEXT' });
        }),
      );
      walPeak = Math.max(walPeak, fs.statSync(`${file}-wal`).size);
      await new Promise((r) => setTimeout(r, 60));
    }
    await new Promise((r) => setTimeout(r, 200));
    const mainAfter = fs.statSync(file).size;
    assert.ok(mainAfter > mainBefore + 500_000, `pages reached the main file (${mainBefore} -> ${mainAfter} bytes)`);
    // 2,000 messages of ~600 bytes went through the WAL; restarted from the top after each
    // caught-up checkpoint, its file stays a fraction of that.
    assert.ok(walPeak < 600_000, `the WAL restarts instead of growing (peak ${walPeak} bytes)`);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
