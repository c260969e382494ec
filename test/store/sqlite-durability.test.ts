/**
 * Durability of the SQLite driver: what was acknowledged is there after a clean close and
 * reopen, and after the writing process is killed with SIGKILL in the middle of a stream.
 * (Power loss is covered by synchronous=FULL, which a test cannot simulate.)
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.ts';
import { SqliteChatStore, sqliteStorePath } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-durability');

async function allSeqs(store: SqliteChatStore, ctx: { tenant_id: string; application_id: string }, conversation_id: string): Promise<Set<number>> {
  const page = await store.messages.list({ ...ctx, conversation_id, viewer_user_id: null, limit: 1000 });
  const seqs = new Set(page?.items.map((m) => m.seq));
  let next = page?.next ?? null;
  while (next) {
    const more = await store.messages.list({ ...ctx, conversation_id, viewer_user_id: null, limit: 1000, after: next });
    for (const m of more?.items ?? []) seqs.add(m.seq);
    next = more?.next ?? null;
  }
  return seqs;
}

describe('SQLite durability', () => {
  it('everything acknowledged survives close and reopen, including state the driver maintains', async () => {
    const file = sqliteStorePath(dir());
    const ctx = { tenant_id: 'tenant-d', application_id: 'app-1' };
    const conversation_id = randomUUID();
    const first = new SqliteChatStore({ driver: 'sqlite', path: file });
    const { conversation } = await first.conversations.create({
      ...ctx, conversation_id, type: 'GROUP', name: 'g', description: null, created_by_user_id: 'ann', created_by_client_id: null,
      members: [{ member_id: randomUUID(), user_id: 'ann', role: 'OWNER' }, { member_id: randomUUID(), user_id: 'bob', role: 'MEMBER' }],
    });
    const claimed = (await first.conversations.claim({ ...ctx, conversation_id }))!;
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        first.messages.append({ ...ctx, conversation_id, epoch: claimed.epoch, message_id: randomUUID(), seq: i + 1, sender_user_id: 'ann', sender_client_id: null, body: `m${i}`, message_type: 'TEXT' }),
      ),
    );
    await first.readState.markRead({ ...ctx, conversation_id, epoch: claimed.epoch, user_id: 'bob', seq: 20 });
    await first.close();

    const second = new SqliteChatStore({ driver: 'sqlite', path: file });
    try {
      const got = await second.conversations.get({ ...ctx, conversation_id }, { kind: 'user', user_id: 'bob' }, 5);
      assert.deepEqual([got?.last_seq, got?.epoch, got?.member_count, got?.unread_count], [50, conversation.epoch + 1, 2, 30]);
      assert.equal((await allSeqs(second, ctx, conversation_id)).size, 50);
    } finally {
      await second.close();
    }
  });

  for (const writer of ['thread', 'inline'] as const) {
    it(`every send acknowledged before SIGKILL is in the file afterwards (${writer} writer)`, async () => {
      const file = sqliteStorePath(dir());
      const conversation_id = randomUUID();
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'test/store/fixtures/sqlite-writer.ts'), file, conversation_id, writer], {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const acked = new Set<number>();
      let buffered = '';
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve, reject) => {
        child.on('exit', () => reject(new Error(`writer exited early after ${acked.size} acknowledgements`)));
        child.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString('utf8');
          const lines = buffered.split('\n');
          buffered = lines.pop()!;
          for (const line of lines) acked.add(Number(line));
          if (acked.size >= 2000 && !child.killed) {
            child.kill('SIGKILL');
            resolve();
          }
        });
      });
      assert.equal(await exited, 'SIGKILL');

      const store = new SqliteChatStore({ driver: 'sqlite', path: file });
      try {
        const stored = await allSeqs(store, { tenant_id: 'crash-tenant', application_id: 'app-1' }, conversation_id);
        const lost = [...acked].filter((seq) => !stored.has(seq));
        assert.deepEqual(lost, [], `${lost.length} acknowledged sends lost`);
        const conv = await store.conversations.get({ tenant_id: 'crash-tenant', application_id: 'app-1', conversation_id }, { kind: 'machine' }, 0);
        assert.equal(conv?.last_seq, Math.max(...stored), 'last_seq committed with the messages');
      } finally {
        await store.close();
      }
    });
  }
});
