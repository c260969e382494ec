/**
 * The durable-append floor of the embedded store, run by bench/floor.ts as its own process pinned
 * to the target CPU: better-sqlite3 alone, no chat code, writing message rows as durably as the
 * node does (WAL, synchronous=FULL, so every COMMIT is an fsync), in transactions of BATCH rows.
 *
 *   node --import tsx bench/floor-store-proc.ts <dir> <seconds> <batch> <shape>
 *
 * Shapes:
 *  - `service`: not a floor but the node's own store for comparison: SqliteChatStore (inline,
 *    exclusive mode as a node opens it) appending the same messages through `messages.append`
 *    (the conversation's fenced advance, triggers and memos included), BATCH appends per
 *    group commit. The gap between `service` and `row` is what the store adds to a row.
 *  - `minimal`: (conversation_id, seq, message_id, body, created_at), clustered on
 *    (conversation_id, seq), with a unique index on message_id: the least a store of ordered,
 *    addressable messages writes.
 *  - `row`: the messages table of schema/sqlite as the node writes it (every column, the same
 *    CHECKs and indexes), without the conversations row the node also advances per append.
 *
 * Rows: 200 conversations in rotation and a 200-character body (the messages scenario's), with
 * the node's UUIDv7 ids (src/actors/ids.ts). Prints one JSON line: rows, seconds, CPU
 * microseconds per row (user + system of this process, fsync included), rows per second; for
 * `service` also ops_per_commit.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { uuidv7 } from '../src/actors/ids.ts';

const [dir, secondsArg, batchArg, shape] = process.argv.slice(2);
const seconds = Number(secondsArg);
const batch = Number(batchArg);
if (!dir || !(seconds > 0) || !(batch >= 1) || (shape !== 'minimal' && shape !== 'row' && shape !== 'service')) {
  process.stderr.write('usage: floor-store-proc.ts <dir> <seconds> <batch> <minimal|row|service>\n');
  process.exit(2);
}

/** 200 conversations in rotation; `next` answers the index of the next row's conversation and its seq. */
const CONVERSATIONS = 200;
const seqs = new Array<number>(CONVERSATIONS).fill(0);
let rows = 0;
function next(): [number, number] {
  const c = rows % CONVERSATIONS;
  rows += 1;
  seqs[c]! += 1;
  return [c, seqs[c]!];
}
const text = 'x'.repeat(200);

/**
 * Runs `commitBatch` (BATCH rows per call) for one unmeasured second (page cache, JIT), then for
 * SECONDS measured, and prints the line described in the header (with `extra()`'s figures).
 */
async function measure(commitBatch: () => void | Promise<void>, extra: () => Record<string, number> = () => ({})): Promise<void> {
  for (const until = performance.now() + 1000; performance.now() < until; ) await commitBatch();
  rows = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) await commitBatch();
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const line = { shape, batch, rows, seconds: Math.round(wall * 100) / 100, cpu_us_per_row: Math.round(((cpu.user + cpu.system) / rows) * 100) / 100, rows_per_second: Math.round(rows / wall) };
  process.stdout.write(`${JSON.stringify(Object.assign(line, extra()))}\n`);
}

if (shape === 'service') await serviceShape();
else await sqliteShape(shape);

/** better-sqlite3 alone: the `row` or `minimal` table (see the header), BATCH inserts per COMMIT. */
async function sqliteShape(which: 'row' | 'minimal'): Promise<void> {
  const db = new Database(path.join(dir!, `floor-${which}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -65536');
  db.pragma('wal_autocheckpoint = 0');
  const conversations = Array.from({ length: CONVERSATIONS }, () => randomUUID());
  let insertRow: (id: string, conversation_id: string, seq: number, at: string) => void;
  if (which === 'minimal') {
    // Clustered on (conversation_id, seq), the id in one more index: two B-trees, the fewest a
    // store of messages read by position and addressed by id can keep.
    db.exec(`CREATE TABLE messages (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, message_id TEXT NOT NULL,
      body TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (conversation_id, seq)) STRICT, WITHOUT ROWID;
      CREATE UNIQUE INDEX messages_by_id ON messages (message_id);`);
    const insert = db.prepare<[string, string, number, string, string]>('INSERT INTO messages (message_id, conversation_id, seq, body, created_at) VALUES (?, ?, ?, ?, ?)');
    insertRow = (id, conversation_id, seq, at) => void insert.run(id, conversation_id, seq, text, at);
  } else {
    db.exec(`CREATE TABLE messages (
      message_id TEXT NOT NULL PRIMARY KEY, conversation_id TEXT NOT NULL, tenant_id TEXT NOT NULL, application_id TEXT NOT NULL,
      seq INTEGER NOT NULL CHECK (seq > 0), sender_user_id TEXT, sender_client_id TEXT, body TEXT NOT NULL,
      message_type TEXT NOT NULL CHECK (message_type IN ('TEXT', 'SYSTEM', 'FILE')), reply_to_message_id TEXT,
      attachments TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attachments)),
      mentioned_user_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(mentioned_user_ids)),
      status TEXT NOT NULL CHECK (status IN ('ACTIVE', 'EDITED', 'DELETED')), edited_at TEXT, deleted_at TEXT,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL) STRICT;
      CREATE UNIQUE INDEX messages_by_seq ON messages (conversation_id, seq);`);
    const insert = db.prepare<[string, string, number, string, string, string]>(`INSERT INTO messages (message_id, conversation_id, tenant_id,
        application_id, seq, sender_user_id, sender_client_id, body, message_type, reply_to_message_id, attachments, mentioned_user_ids,
        status, edited_at, deleted_at, created_at, updated_at)
      VALUES (?, ?, 'acme', 'support', ?, 'alice', 'acme-support-backend', ?, 'TEXT', NULL, '[]', '[]', 'ACTIVE', NULL, NULL, ?, ?)`);
    insertRow = (id, conversation_id, seq, at) => void insert.run(id, conversation_id, seq, text, at, at);
  }
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  await measure(() => {
    begin.run();
    const at = new Date().toISOString();
    for (let i = 0; i < batch; i += 1) {
      const [c, seq] = next();
      insertRow(uuidv7(), conversations[c]!, seq, at);
    }
    commit.run();
  });
  db.close();
}

/** The node's own store, inline: `messages.append` in group commits of BATCH (see the header). */
async function serviceShape(): Promise<void> {
  const { SqliteChatStore, sqliteStorePath } = await import('../src/store/sqlite/sqlite-store.ts');
  const store = new SqliteChatStore({ driver: 'sqlite', path: sqliteStorePath(path.join(dir!, 'service')), mode: 'exclusive' });
  const ctx = { tenant_id: 'acme', application_id: 'support' };
  const held: Array<{ conversation_id: string; epoch: number }> = [];
  for (let i = 0; i < CONVERSATIONS; i += 1) {
    const members = ['alice', 'bob', 'carol'].map((user_id) => ({ member_id: randomUUID(), user_id, role: user_id === 'alice' ? ('OWNER' as const) : ('MEMBER' as const) }));
    const { conversation } = await store.conversations.create({ conversation_id: randomUUID(), type: 'GROUP', name: `c${i}`, description: null, created_by_user_id: 'alice', created_by_client_id: null, members, tenant_id: ctx.tenant_id, application_id: ctx.application_id });
    const claimed = await store.conversations.claim({ tenant_id: ctx.tenant_id, application_id: ctx.application_id, conversation_id: conversation.conversation_id });
    held.push({ conversation_id: claimed!.conversation_id, epoch: claimed!.epoch });
  }
  await measure(async () => {
    const at = new Date().toISOString();
    const pending = [];
    for (let i = 0; i < batch; i += 1) {
      const [c, seq] = next();
      const { conversation_id, epoch } = held[c]!;
      pending.push(store.messages.append({ tenant_id: ctx.tenant_id, application_id: ctx.application_id, conversation_id, epoch, at, message_id: uuidv7(), seq, sender_user_id: 'bob', sender_client_id: 'acme-support-backend', body: text, message_type: 'TEXT' }));
    }
    for (const r of await Promise.all(pending)) if (r === null || !r.created) throw new Error('an append was refused');
  }, () => {
    const { transactions, ops } = store.stats();
    return { ops_per_commit: Math.round((ops / transactions) * 10) / 10 };
  });
  await store.close();
}
