/**
 * Idempotency-Key across a crash, one node on SQLite: a machine client sends messages (and
 * creates a few groups) each under its own key, LANES at a time; the node gets SIGKILL while
 * requests are in flight. A new node on the same data directory is then asked EVERY key again
 * with the same body (those that had no answer, and those that had one):
 * - each retry is answered at once: 201, never idempotency_in_progress (a claim left by the
 *   dead process is not waited out), with the message / conversation of the first answer when
 *   there was one;
 * - every message is in history exactly once, and every group exists exactly once.
 * Whether a kill leaves a claim pending is a matter of timing (it may fall between group commits):
 * the data file is read after each kill, and the load and the kill are repeated (up to ROUNDS)
 * until one did, so the take-over is always exercised.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { sqliteStorePath } from '../src/store/sqlite/sqlite-store.ts';
import { bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

const OPS = 240;
const LANES = 24;
const KILL_AFTER = 100;
/** Every CREATE_EVERY-th operation creates a group instead of sending. */
const CREATE_EVERY = 12;
const CONVERSATIONS = 3;
const ROUNDS = 5;
const MEMBERS = ['bob', 'carol', 'frank'];
const ENV = { CHAT_RATE_CLIENT: '1000000/60s', CHAT_RATE_SEND: '1000000/10s' };
const RUN = Math.random().toString(36).slice(2, 8);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-idem-durability-'));
const nodes: TestNode[] = [];
after(async () => {
  for (const n of nodes) await n.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const ctx = (node: TestNode): string => `${node.api}/tenants/acme/applications/support`;
const post = (node: TestNode, token: string, route: string, body: unknown, key?: string): Promise<Res> =>
  request(`${ctx(node)}${route}`, {
    method: 'POST',
    headers: { ...bearer(token), 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) },
    body: JSON.stringify(body),
  });

/** One keyed request: where it goes, what it sends, and what answered it before the kill. */
interface Op {
  key: string;
  route: string;
  body: Record<string, unknown>;
  /** The id the first answer named (message_id or conversation_id), or null without one. */
  answered: string | null;
}

function opFor(i: number, conversations: readonly string[]): Op {
  const key = `idem-${RUN}-${i}`;
  if (i % CREATE_EVERY === 0) {
    return { key, route: '/conversations', body: { type: 'GROUP', name: `idem group ${RUN} ${i}`, member_user_ids: MEMBERS }, answered: null };
  }
  const conversationId = conversations[i % conversations.length]!;
  return { key, route: `/conversations/${conversationId}/messages`, body: { body: `idem message ${RUN} ${i}`, actor_user_id: MEMBERS[i % MEMBERS.length] }, answered: null };
}

const idOf = (res: Res): string => {
  const v = res.json() as { message_id?: string; conversation_id: string };
  return v.message_id ?? v.conversation_id;
};

/** Every item of a paged listing, through next_cursor. */
async function listAll<T>(url: string, token: string): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages += 1) {
    const sep = url.includes('?') ? '&' : '?';
    const res = await request(cursor === null ? `${url}${sep}limit=100` : `${url}${sep}limit=100&before=${encodeURIComponent(cursor)}`, { headers: bearer(token) });
    assert.equal(res.status, 200, res.text);
    const page = res.json() as { items: T[]; next_cursor: string | null };
    all.push(...page.items);
    cursor = page.next_cursor;
    if (cursor === null) return all;
  }
  throw new Error('listing: more than 100 pages');
}

/** Keyed requests, LANES at a time, until the KILL_AFTER-th answer; then SIGKILL. Answers every op issued. */
async function loadAndKill(node: TestNode, token: string, conversations: readonly string[], from: number): Promise<{ ops: Op[]; inFlight: number }> {
  const ops: Op[] = [];
  let acks = 0;
  let inFlight = 0;
  let killed = false;
  const exited = new Promise<void>((resolve) => node.child.once('exit', () => resolve()));
  const lane = async (): Promise<void> => {
    while (!killed && ops.length < OPS) {
      const op = opFor(from + ops.length, conversations);
      ops.push(op);
      let res: Res;
      try {
        res = await post(node, token, op.route, op.body, op.key);
      } catch {
        inFlight += 1;
        continue;
      }
      assert.equal(res.status, 201, `${op.key} answered ${res.status} before the kill: ${res.text}`);
      op.answered = idOf(res);
      if (++acks === KILL_AFTER && !killed) {
        killed = true;
        node.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  if (!killed) node.child.kill('SIGKILL');
  await exited;
  assert.equal(node.child.signalCode, 'SIGKILL');
  return { ops, inFlight };
}

/** Claims of this run's keys left pending in the data file (read while no node runs). */
function pendingClaims(): number {
  const db = new Database(sqliteStorePath(dataDir), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE idempotency_key LIKE ? AND response_status IS NULL').get(`idem-${RUN}-%`) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

describe('idempotency keys across a SIGKILL (one node, SQLite)', () => {
  test('every key retried on the restarted node is answered at once, and applied exactly once', { timeout: 120_000 }, async (t) => {
    let node = await startTestNode({ ...ENV, CHAT_DATA_DIR: dataDir });
    nodes.push(node);
    let token = await machineToken(node.idp);
    const conversations: string[] = [];
    for (let i = 0; i < CONVERSATIONS; i += 1) {
      const res = await post(node, token, '/conversations', { type: 'GROUP', name: `idem base ${RUN} ${i}`, member_user_ids: MEMBERS });
      assert.equal(res.status, 201, res.text);
      conversations.push(res.json().conversation_id as string);
    }

    const ops: Op[] = [];
    let pending = 0;
    for (let round = 1; round <= ROUNDS && pending === 0; round += 1) {
      const r = await loadAndKill(node, token, conversations, ops.length);
      ops.push(...r.ops);
      pending = pendingClaims();
      t.diagnostic(`round ${round}: killed after ${r.ops.filter((op) => op.answered !== null).length} answers of ${r.ops.length} issued; ${r.inFlight} in flight; ${pending} claim(s) left pending`);
      node = await startTestNode({ ...ENV, CHAT_DATA_DIR: dataDir });
      nodes.push(node);
      token = await machineToken(node.idp);
    }
    assert.ok(pending > 0, `no kill in ${ROUNDS} rounds left a claim pending: the take-over was not exercised`);

    // Every key again, concurrently, as clients retrying after the outage would.
    const started = Date.now();
    const retries = await Promise.all(ops.map((op) => post(node, token, op.route, op.body, op.key)));
    const elapsed = Date.now() - started;
    for (const [i, op] of ops.entries()) {
      const res = retries[i]!;
      assert.equal(res.status, 201, `${op.key} (${op.answered === null ? 'unanswered' : 'answered'}) retried: ${res.status} ${res.text}`);
      if (op.answered !== null) assert.equal(idOf(res), op.answered, `${op.key}: the retry answers what the first run answered`);
      op.answered = idOf(res);
    }
    assert.ok(elapsed < 15_000, `the retries took ${elapsed} ms: no claim of the dead process was waited out`);

    // Exactly once: every message in history once (by id and by body), every group once.
    const bob = await userToken(node.idp, 'bob');
    for (const conversationId of conversations) {
      const items = await listAll<{ message_id: string; body: string }>(`${ctx(node)}/conversations/${conversationId}/messages`, token);
      const expected = ops.filter((op) => op.route === `/conversations/${conversationId}/messages`);
      assert.equal(new Set(items.map((m) => m.body)).size, items.length, `${conversationId}: a message is stored twice`);
      assert.deepEqual(items.map((m) => m.message_id).sort(), expected.map((op) => op.answered).sort(), `${conversationId}: history holds each send once`);
    }
    const groups = await listAll<{ conversation_id: string; name: string }>(`${ctx(node)}/conversations?type=GROUP`, bob);
    const created = ops.filter((op) => op.route === '/conversations');
    const mine = groups.filter((g) => g.name.startsWith(`idem group ${RUN} `));
    assert.deepEqual(mine.map((g) => g.conversation_id).sort(), created.map((op) => op.answered).sort(), 'each group once');
  });
});
