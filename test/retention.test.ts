/**
 * The retention job really removes expired messages: old messages seeded through a second store
 * instance on the node's SQLite file (shared-file mode, `at` in the past), retention set over
 * HTTP, the job run once through its exported function, history read back over HTTP. Then the
 * job the node schedules itself (CHAT_RETENTION_INTERVAL_MS=1000) does the same.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../src/log/index.ts';
import { RETENTION_BATCH, runRetentionOnce } from '../src/retention/retention-job.ts';
import { createStore, sqliteStorePath, type ChatStore } from '../src/store/index.ts';
import { caller, type Call } from './helpers/admin.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

const DAY = 86_400_000;
const silent = createLogger('silent');

interface Seeded {
  conversation_id: string;
  tenant_id: string;
  application_id: string;
}

/** A GROUP of bob and carol with `old` messages 40 days old, then `recent` ones from the last day. */
async function seed(store: ChatStore, tenant_id: string, application_id: string, old: number, recent: number): Promise<Seeded> {
  const conversation_id = crypto.randomUUID();
  const ref = { tenant_id, application_id, conversation_id };
  const members = ['bob', 'carol'].map((user_id) => ({ member_id: crypto.randomUUID(), user_id, role: 'MEMBER' as const }));
  await store.conversations.create({ ...ref, type: 'GROUP', name: 'g', description: null, created_by_user_id: 'bob', created_by_client_id: null, members, at: new Date(Date.now() - 41 * DAY).toISOString() });
  const writes: Promise<unknown>[] = [];
  for (let seq = 1; seq <= old + recent; seq++) {
    const at = seq <= old ? Date.now() - 40 * DAY + seq : Date.now() - DAY + seq;
    writes.push(store.messages.append({ ...ref, epoch: 1, seq, message_id: crypto.randomUUID(), sender_user_id: 'bob', sender_client_id: null, body: `m${seq}`, message_type: 'TEXT', at: new Date(at).toISOString() }));
  }
  await Promise.all(writes);
  return ref;
}

async function historySeqs(call: Call, token: string, c: Seeded): Promise<number[]> {
  const res = await call('GET', `/tenants/${c.tenant_id}/applications/${c.application_id}/conversations/${c.conversation_id}/messages?limit=100`, token);
  assert.equal(res.status, 200, res.text);
  return res.json().items.map((m: { seq: number }) => m.seq);
}

describe('retention job', () => {
  let node: TestNode;
  let store: ChatStore;
  let call: Call;

  before(async () => {
    node = await startTestNode({ CHAT_SQLITE_MODE: 'shared-file', CHAT_RETENTION_INTERVAL_MS: '0' });
    store = await createStore({ driver: 'sqlite', mode: 'shared-file', path: sqliteStorePath(node.dataDir) });
    call = caller(node.api);
  });
  after(async () => {
    await store.close();
    await node.stop();
  });

  test('runRetentionOnce deletes the expired messages of tenants with a retention, in batches', async () => {
    const old = 2 * RETENTION_BATCH + 7;
    const acme = await seed(store, 'acme', 'support', old, 3);
    const globex = await seed(store, 'globex', 'portal', 5, 1);
    const alice = await userToken(node.idp, 'alice', 'chat-web');
    const set = await call('PATCH', '/tenants/acme/admin/settings', alice, { message_retention_days: 30 });
    assert.equal(set.status, 200, set.text);

    const bob = await userToken(node.idp, 'bob');
    assert.equal((await historySeqs(call, bob, acme)).length, 100, 'before: a full page');

    const run = await runRetentionOnce(store, silent);
    assert.deepEqual(run, { tenants: 1, deleted: old, failed: 0 });
    assert.deepEqual(await historySeqs(call, bob, acme), [old + 3, old + 2, old + 1], 'only the recent messages are left; seqs are kept');
    const untouched = await store.messages.list({ ...globex, viewer_user_id: null, limit: 100 });
    assert.equal(untouched!.items.length, 6, 'a tenant without retention keeps everything');

    assert.deepEqual(await runRetentionOnce(store, silent), { tenants: 1, deleted: 0, failed: 0 }, 'a second run finds nothing');
    // Moving "now" 30 days on expires the recent ones too.
    const later = new Date(Date.now() + 30 * DAY).toISOString();
    assert.equal((await runRetentionOnce(store, silent, { at: later })).deleted, 3);
    assert.deepEqual(await historySeqs(call, bob, acme), []);
  });
});

describe('the retention job a node schedules', () => {
  let node: TestNode;
  let store: ChatStore;

  before(async () => {
    node = await startTestNode({ CHAT_SQLITE_MODE: 'shared-file', CHAT_RETENTION_INTERVAL_MS: '1000' });
    store = await createStore({ driver: 'sqlite', mode: 'shared-file', path: sqliteStorePath(node.dataDir) });
  });
  after(async () => {
    await store.close();
    await node.stop();
  });

  test('runs every CHAT_RETENTION_INTERVAL_MS and logs what it deleted', async () => {
    assert.ok(node.lines.some((l) => l.includes('"retention job scheduled"') && l.includes('"interval_ms":1000')));
    const c = await seed(store, 'acme', 'support', 4, 2);
    await store.settings.update('acme', { message_retention_days: 7 });
    const deadline = Date.now() + 15_000;
    let line: string | undefined;
    while (!(line = node.lines.find((l) => l.includes('retention: expired messages deleted'))) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(line, 'the node logged a purge');
    assert.deepEqual({ ...JSON.parse(line) }, { ...JSON.parse(line), tenant_id: 'acme', retention_days: 7, deleted: 4 });
    const call = caller(node.api);
    assert.deepEqual(await historySeqs(call, await userToken(node.idp, 'bob'), c), [6, 5]);
  });
});
