/**
 * Durability end to end: messages acknowledged with 201 survive the node being killed with SIGKILL
 * mid-stream, and are in history exactly once after a restart on the same data directory.
 *
 * A machine client sends SENDS messages (on behalf of members) to a few conversations, LANES at a
 * time; when the KILL_AFTER-th 201 arrives, the node gets SIGKILL while the other lanes' sends are
 * still in flight. A new node on the same CHAT_DATA_DIR must then list, paging through next_cursor:
 * every acknowledged message once, with the seq and body it was acknowledged with; no seq and no
 * message id twice; seqs 1..n without a gap. Sends that were in flight may be there or not (at most
 * once, too). A send after the restart continues the numbering.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken } from './helpers/tokens.ts';

const SENDS = 300;
const LANES = 24;
const KILL_AFTER = 150;
const CONVERSATIONS = 4;
const MEMBERS = ['bob', 'carol', 'frank'];
const ENV = { CHAT_RATE_CLIENT: '1000000/60s', CHAT_RATE_SEND: '1000000/10s' };

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-durability-'));
const nodes: TestNode[] = [];
after(async () => {
  for (const n of nodes) await n.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const ctx = (node: TestNode): string => `${node.api}/tenants/acme/applications/support`;
const post = (node: TestNode, token: string, route: string, body: unknown): Promise<Res> =>
  request(`${ctx(node)}${route}`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

interface Ack {
  conversation_id: string;
  message_id: string;
  seq: number;
  body: string;
}

interface Stored {
  message_id: string;
  seq: number;
  body: string;
}

/** Every message of a conversation, newest first, through next_cursor pages. */
async function history(node: TestNode, token: string, conversationId: string): Promise<Stored[]> {
  const all: Stored[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages += 1) {
    const qs: string = cursor === null ? 'limit=100' : `limit=100&before=${encodeURIComponent(cursor)}`;
    const res = await request(`${ctx(node)}/conversations/${conversationId}/messages?${qs}`, { headers: bearer(token) });
    assert.equal(res.status, 200, res.text);
    const page = res.json() as { items: Stored[]; next_cursor: string | null };
    all.push(...page.items);
    cursor = page.next_cursor;
    if (cursor === null) return all;
  }
  throw new Error('history: more than 100 pages');
}

test('acknowledged messages survive SIGKILL mid-stream, exactly once, after a restart on the same data', { timeout: 60_000 }, async (t) => {
  const first = await startTestNode({ ...ENV, CHAT_DATA_DIR: dataDir });
  nodes.push(first);
  const token = await machineToken(first.idp);

  const conversations: string[] = [];
  for (let i = 0; i < CONVERSATIONS; i += 1) {
    const res = await post(first, token, '/conversations', { type: 'GROUP', name: `durable ${i}`, member_user_ids: MEMBERS });
    assert.equal(res.status, 201, res.text);
    conversations.push(res.json().conversation_id as string);
  }

  // Sends, LANES in flight; the KILL_AFTER-th acknowledgement kills the node on the spot.
  const acks: Ack[] = [];
  const failures: string[] = [];
  let issued = 0;
  let killed = false;
  const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
  const lane = async (): Promise<void> => {
    while (!killed && issued < SENDS) {
      const i = issued++;
      const conversationId = conversations[i % CONVERSATIONS]!;
      const body = `durable message ${i}`;
      let res: Res;
      try {
        res = await post(first, token, `/conversations/${conversationId}/messages`, { body, actor_user_id: MEMBERS[i % MEMBERS.length] });
      } catch (err) {
        failures.push(`${i}: ${(err as Error).message}`);
        continue;
      }
      assert.equal(res.status, 201, `send ${i} answered ${res.status} before the kill: ${res.text}`);
      const m = res.json() as { message_id: string; seq: number; body: string; conversation_id: string };
      assert.equal(m.body, body);
      assert.equal(m.conversation_id, conversationId);
      acks.push({ conversation_id: conversationId, message_id: m.message_id, seq: m.seq, body });
      if (acks.length === KILL_AFTER && !killed) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  await exited;
  assert.equal(first.child.signalCode, 'SIGKILL', 'the node was killed, not stopped');
  assert.ok(acks.length >= KILL_AFTER, `${acks.length} acknowledged`);
  assert.ok(acks.length < SENDS, `the kill came while sends were still to come (${acks.length} of ${SENDS} acknowledged)`);
  assert.ok(failures.length > 0, 'some sends were in flight when the node died');

  t.diagnostic(`killed after ${acks.length} acknowledged of ${issued} issued; ${failures.length} in flight failed (first: ${failures[0]})`);
  const second = await startTestNode({ ...ENV, CHAT_DATA_DIR: dataDir });
  nodes.push(second);
  const token2 = await machineToken(second.idp);

  let stored = 0;
  for (const conversationId of conversations) {
    const items = await history(second, token2, conversationId);
    stored += items.length;
    const seqs = items.map((m) => m.seq);
    assert.equal(new Set(seqs).size, seqs.length, `${conversationId}: a seq appears twice`);
    assert.equal(new Set(items.map((m) => m.message_id)).size, items.length, `${conversationId}: a message appears twice`);
    assert.deepEqual(seqs, Array.from({ length: items.length }, (_, k) => items.length - k), `${conversationId}: seqs are n..1 without a gap`);
    assert.equal(new Set(items.map((m) => m.body)).size, items.length, `${conversationId}: a send was stored twice`);

    const byId = new Map(items.map((m) => [m.message_id, m]));
    const mine = acks.filter((a) => a.conversation_id === conversationId);
    const lost = mine.filter((a) => !byId.has(a.message_id));
    assert.deepEqual(lost, [], `${conversationId}: ${lost.length} acknowledged message(s) lost`);
    for (const a of mine) {
      const m = byId.get(a.message_id)!;
      assert.equal(m.seq, a.seq, `${a.message_id}: stored with another seq than acknowledged`);
      assert.equal(m.body, a.body);
    }

    // The numbering continues after the restart: no seq is reused.
    const next = await post(second, token2, `/conversations/${conversationId}/messages`, { body: 'after the restart', actor_user_id: 'bob' });
    assert.equal(next.status, 201, next.text);
    assert.equal(next.json().seq, items.length + 1);
  }
  // In-flight sends may or may not have made it; never more than were issued.
  t.diagnostic(`after the restart: ${stored} stored`);
  assert.ok(stored >= acks.length && stored <= issued, `stored ${stored}, acknowledged ${acks.length}, issued ${issued}`);
});
