/**
 * The SQLite driver's hot queries are served by indexes: EXPLAIN QUERY PLAN of each names the
 * index it relies on and never a full scan of a table, both on a fresh file and after ANALYZE
 * over realistic data (statistics must not flip a plan to a scan).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { listSql } from '../../src/store/sqlite/conversations.ts';
import { memberPageSql } from '../../src/store/sqlite/members.ts';
import { HISTORY_SQL, RETENTION_BOUNDARY_SQL, RETENTION_CONVERSATIONS_SQL, RETENTION_DELETE_SQL } from '../../src/store/sqlite/messages.ts';
import { SEARCH_SQL } from '../../src/store/sqlite/profiles.ts';
import { UNREAD_COUNT_SQL } from '../../src/store/sqlite/read-state.ts';
import { SqliteChatStore, sqliteStorePath } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-plans');
const listParams = { tenant_id: 't', application_id: 'a', user_id: 'u', type: 'GROUP', at: '\u{10FFFF}', id: '\u{10FFFF}', n: 51 };

interface Case {
  name: string;
  sql: string;
  params: unknown;
  /** Indexes the plan must use. */
  uses: string[];
  /** The index already yields the order: no sort step. */
  sorted?: boolean;
}

const cases: Case[] = [
  { name: 'history page', sql: HISTORY_SQL, params: ['c', 100, 51], uses: ['messages_by_seq'], sorted: true },
  { name: 'unread count', sql: UNREAD_COUNT_SQL, params: ['c', 10, 'u'], uses: ['messages_by_seq'] },
  { name: 'machine listing', sql: listSql('machine', undefined), params: listParams, uses: ['conversations_by_activity'], sorted: true },
  { name: 'machine listing by type', sql: listSql('machine', 'GROUP'), params: listParams, uses: ['conversations_by_type_activity'], sorted: true },
  { name: 'user listing', sql: listSql('user', undefined), params: listParams, uses: ['members_active_by_user', 'conversations_public_channels'] },
  { name: 'user listing of channels', sql: listSql('user', 'CHANNEL'), params: listParams, uses: ['members_active_by_user', 'conversations_public_channels'] },
  { name: 'user listing of groups', sql: listSql('user', 'GROUP'), params: listParams, uses: ['members_active_by_user'] },
  { name: 'active members page', sql: memberPageSql(true), params: { conversation_id: 'c', joined_at: '', member_id: '', n: 51 }, uses: ['members_active_by_join'], sorted: true },
  { name: 'all members page', sql: memberPageSql(false), params: { conversation_id: 'c', joined_at: '', member_id: '', n: 51 }, uses: ['members_by_join'], sorted: true },
  { name: 'retention: conversations of a tenant', sql: RETENTION_CONVERSATIONS_SQL, params: ['t', '', 64], uses: ['conversations_by_tenant'], sorted: true },
  { name: 'retention: first message not expired', sql: RETENTION_BOUNDARY_SQL, params: ['c', '2026-01-01T00:00:00.000Z'], uses: ['messages_by_seq'], sorted: true },
  { name: 'retention: delete the expired', sql: RETENTION_DELETE_SQL, params: ['c', 10, 500], uses: ['messages_by_seq'], sorted: true },
  { name: 'user search', sql: SEARCH_SQL, params: { tenant_id: 't', lo: 'a', hi: 'b', n: 20 }, uses: ['profiles_by_user_key', 'profiles_by_name_key'] },
];

/** Plan lines that read a whole table (subqueries, json_each lists and constant rows are fine). */
function fullScans(plan: string[]): string[] {
  return plan.filter((line) => /^SCAN /.test(line) && !/^SCAN (\(subquery|json_each|CONSTANT ROW)/.test(line));
}

function checkPlans(file: string): void {
  const db = new Database(file, { readonly: true });
  try {
    for (const c of cases) {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(c.params as never) as Array<{ detail: string }>).map((r) => r.detail);
      const text = plan.join('\n');
      assert.deepEqual(fullScans(plan), [], `${c.name} scans a table:\n${text}`);
      for (const index of c.uses) assert.match(text, new RegExp(`USING (COVERING )?INDEX ${index}\\b`), `${c.name} does not use ${index}:\n${text}`);
      if (c.sorted) assert.doesNotMatch(text, /TEMP B-TREE/, `${c.name} sorts instead of reading in index order:\n${text}`);
    }
  } finally {
    db.close();
  }
}

describe('SQLite query plans', () => {
  it('use indexes on a fresh file (no statistics)', async () => {
    const file = sqliteStorePath(dir());
    await new SqliteChatStore({ driver: 'sqlite', path: file }).close();
    checkPlans(file);
  });

  describe('after ANALYZE over many conversations, members and messages', () => {
    const file = sqliteStorePath(dir());
    before(async () => {
      const store = new SqliteChatStore({ driver: 'sqlite', path: file, mode: 'shared-file' });
      const users = Array.from({ length: 40 }, (_, i) => `user-${i}`);
      await store.profiles.upsert('t', users.map((user_id) => ({ user_id, display_name: `Name ${user_id}`, avatar_url: null })), 'idp');
      const writes = [];
      for (let i = 0; i < 300; i += 1) {
        const type = (['DIRECT', 'GROUP', 'CHANNEL'] as const)[i % 3]!;
        const members = type === 'DIRECT' ? [users[i % 40]!, users[(i + 1) % 40]!] : users.slice(i % 30, (i % 30) + 8);
        writes.push(
          store.conversations
            .create({
              tenant_id: 't', application_id: i % 4 ? 'a' : 'b', conversation_id: randomUUID(), type, name: null, description: null,
              created_by_user_id: members[0]!, created_by_client_id: null, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
              members: members.map((user_id) => ({ member_id: randomUUID(), user_id, role: 'MEMBER' as const })),
            })
            .then(async ({ conversation, created }) => {
              if (!created) return; // a DIRECT pair met again: the store answered the first one
              for (let seq = 1; seq <= 20; seq += 1) {
                await store.messages.append({
                  tenant_id: 't', application_id: conversation.application_id, conversation_id: conversation.conversation_id, epoch: conversation.epoch,
                  message_id: randomUUID(), seq, sender_user_id: members[seq % members.length]!, sender_client_id: null, body: 'x', message_type: 'TEXT',
                });
              }
            }),
        );
      }
      await Promise.all(writes);
      await store.close();
      const db = new Database(file);
      db.exec('ANALYZE');
      db.close();
    });

    it('still use the same indexes', () => checkPlans(file));
  });
});
