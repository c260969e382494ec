/**
 * The Cassandra driver's statements, checked without a server (the contract suite runs them on a
 * live node in cassandra-store.test.ts): what a server accepting a statement does not prove.
 *
 * MOCK, for checks a server cannot make: `RecordingClient` stands in for cassandra-driver's Client. It
 * records every statement, its bound parameters and its options, and answers reads from a few
 * canned rows (one conversation, two members, some messages), so every store method can be driven
 * down its normal path. It does not execute CQL: what is checked is the statements themselves,
 * against the schema parsed from schema/cassandra/*.cql (src/store/cassandra/schema-model.ts):
 * every column exists, every SELECT/UPDATE/DELETE restricts the full partition key, no ALLOW
 * FILTERING, LWTs where uniqueness and fencing need them (with serial consistency LOCAL_SERIAL),
 * bind markers equal to the parameters the code passes, and the history read order.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import cassandra from 'cassandra-driver';
import { ACTIVITY_CQL } from '../../src/store/cassandra/activity.ts';
import { CassandraChatStore } from '../../src/store/cassandra/cassandra-store.ts';
import { CONVERSATIONS_CQL } from '../../src/store/cassandra/conversations.ts';
import type { Cql, CqlClient, QueryOptions, Row } from '../../src/store/cassandra/cql.ts';
import { DIRECT_PAIRS_CQL } from '../../src/store/cassandra/direct-pairs.ts';
import { IDEMPOTENCY_CQL } from '../../src/store/cassandra/idempotency.ts';
import { MEMBERS_CQL } from '../../src/store/cassandra/members.ts';
import { MESSAGES_CQL } from '../../src/store/cassandra/messages.ts';
import { PROFILES_CQL } from '../../src/store/cassandra/profiles.ts';
import { PUSH_DEVICES_CQL } from '../../src/store/cassandra/push-devices.ts';
import { REACTIONS_CQL } from '../../src/store/cassandra/reactions.ts';
import { READ_STATE_CQL } from '../../src/store/cassandra/read-state.ts';
import { ROLE_OVERRIDES_CQL } from '../../src/store/cassandra/role-overrides.ts';
import { parseSchema, parseStatement, problems, splitStatements } from '../../src/store/cassandra/schema-model.ts';
import { SETTINGS_CQL } from '../../src/store/cassandra/settings.ts';
import { InvalidPositionError, StaleEpochError, StoreClosedError, StoreUnavailableError } from '../../src/store/errors.ts';

const { consistencies } = cassandra.types;
const SCHEMA_DIR = new URL('../../schema/cassandra/', import.meta.url);
/** Every schema file, in order (version 2 adds columns with ALTER TABLE). */
const SCHEMA_TEXT = fs.readdirSync(SCHEMA_DIR).filter((f) => /^\d{3}_\w+\.cql$/.test(f)).sort().map((f) => fs.readFileSync(new URL(f, SCHEMA_DIR), 'utf8')).join('\n');
const SCHEMA = parseSchema(SCHEMA_TEXT);
const GROUPS: Record<string, Record<string, Cql>> = {
  ACTIVITY_CQL, CONVERSATIONS_CQL, DIRECT_PAIRS_CQL, IDEMPOTENCY_CQL, MEMBERS_CQL, MESSAGES_CQL, PROFILES_CQL,
  PUSH_DEVICES_CQL, REACTIONS_CQL, READ_STATE_CQL, ROLE_OVERRIDES_CQL, SETTINGS_CQL,
};
const ALL = Object.entries(GROUPS).flatMap(([group, stmts]) => Object.entries(stmts).map(([name, s]) => ({ name: `${group}.${name}`, ...s })));

const CONV = '0b6f4a36-3c1e-4c55-9f5e-3f2f0a4b1c2d';
const CTX = { tenant_id: 't1', application_id: 'app-1' };
const REF = { ...CTX, conversation_id: CONV };
const T0 = new Date('2026-01-01T00:00:00.000Z');
const key = { principal_key: 'p', idempotency_key: 'k', method_route: 'POST /x' };

interface Call { query: string; params: unknown[]; options: QueryOptions; inBatch: boolean }

/** The world the canned answers describe; tests tweak it. */
interface World {
  lastSeq: number; epoch: number; deleted: boolean; type: string; messageAt: number | null; memberStatus: string;
  /** Answer of a lightweight transaction; default: applied. */
  lwt: (query: string) => Row;
}
const APPLIED = (): Row => ({ '[applied]': true });

class RecordingClient implements CqlClient {
  readonly calls: Call[] = [];
  world: World = { lastSeq: 10, epoch: 3, deleted: false, type: 'GROUP', messageAt: null, memberStatus: 'ACTIVE', lwt: APPLIED };
  /** Delay of every execute, in ms (ordering tests). */
  delayMs = 0;
  /** The next `times` executes of statements starting with `prefix` throw `error`. */
  failOn: { prefix: string; error: Error; times: number } | null = null;
  shutdowns = 0;

  async execute(query: string, params: unknown[], options: QueryOptions): Promise<{ rows: readonly Row[] }> {
    this.calls.push({ query, params, options, inBatch: false });
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const f = this.failOn;
    if (f && f.times > 0 && query.startsWith(f.prefix)) {
      f.times -= 1;
      throw f.error;
    }
    return { rows: this.answer(query, params) };
  }

  async batch(queries: Array<{ query: string; params: unknown[] }>, options: QueryOptions): Promise<unknown> {
    for (const q of queries) this.calls.push({ query: q.query, params: q.params, options, inBatch: true });
    return {};
  }

  async shutdown(): Promise<void> {
    this.shutdowns += 1;
  }

  private conv(): Row {
    const w = this.world;
    return { ...CTX, conversation_id: CONV, type: w.type, visibility: null, name: 'n', description: null, status: 'ACTIVE', created_by_user_id: 'ann',
      created_by_client_id: null, last_activity_at: T0, created_at: T0, updated_at: T0, deleted_at: w.deleted ? T0 : null, member_count: 2,
      last_seq: w.lastSeq, epoch: w.epoch, head_seq: w.lastSeq, head_activity_at: null, revision: 7 };
  }

  private message(seq: number): Row {
    return { conversation_id: CONV, bucket: 0, seq, message_id: `m${seq}`, ...CTX, sender_user_id: 'ann', sender_client_id: null, body: 'b', message_type: 'TEXT',
      reply_to_message_id: null, attachments: '[]', mentioned_user_ids: '[]', status: 'ACTIVE', edited_at: null, deleted_at: null, created_at: T0, updated_at: T0 };
  }

  private member(user_id: string): Row {
    return { member_id: `id-${user_id}`, conversation_id: CONV, user_id, role: 'MEMBER', status: this.world.memberStatus, joined_at: T0, updated_at: T0 };
  }

  private answer(query: string, params: unknown[]): Row[] {
    const w = this.world;
    if (/ IF /.test(query)) return [w.lwt(query)];
    const table = /FROM (\w+)/.exec(query)?.[1];
    const limit = / LIMIT \?$/.test(query) ? Number(params[params.length - 1]) : Infinity;
    switch (table) {
      case 'conversations': return params[0] === CONV ? [this.conv()] : [];
      case 'message_by_id': return w.messageAt === null ? [] : [{ conversation_id: CONV, seq: w.messageAt }];
      case 'messages_by_conversation': {
        if (/seq = \?/.test(query)) return [this.message(Number(params[2]))];
        const [, , low, top] = params.map(Number);
        const rows: Row[] = [];
        for (let s = Math.min(top!, w.lastSeq); s > low! && rows.length < limit; s -= 1) rows.push(this.message(s));
        return rows;
      }
      case 'members': return query.includes('IN ?') ? (params[1] as string[]).map((u) => this.member(u)) : query.includes('user_id = ?') ? [this.member(String(params[1]))] : [this.member('ann'), this.member('bob')];
      case 'members_by_join': return [{ joined_at: T0, member_id: 'id-ann', user_id: 'ann' }, { joined_at: T0, member_id: 'id-bob', user_id: 'bob' }];
      case 'memberships_by_user': return [{ conversation_id: CONV, type: 'GROUP', role: 'OWNER' }];
      case 'conversations_by_activity': case 'conversations_by_type_activity': case 'public_channels_by_activity': return [{ last_activity_at: T0, conversation_id: CONV }];
      case 'conversations_by_tenant': return [{ type: 'GROUP' }, { type: 'DIRECT' }];
      case 'active_members_by_tenant': return [{ user_id: 'ann' }, { user_id: 'ann' }, { user_id: 'bob' }];
      case 'reactions': return query.includes('emoji = ?') ? (params[1] === '👍' ? [{ user_id: params[2] }] : []) : [{ emoji: '👍', user_id: 'bob', created_at: T0 }];
      case 'read_state': return [{ last_read_seq: 4 }];
      case 'profile_search': return [{ user_id: 'ann' }];
      case 'profiles': return [{ tenant_id: 't1', user_id: 'ann', display_name: 'Old', avatar_url: null, updated_at: T0 }];
      case 'idempotency_by_hour': return (params[0] as Date).getTime() === T0.getTime() ? [{ created_at: T0, ...key }] : [];
      case 'idempotency_keys': return [{ principal_key: 'p', idempotency_key: 'k', method_route: 'POST /x', request_hash: 'h', response_status: null, response_body: null, created_at: T0, owner: 'o1' }];
      case 'retention_tenants': return [{ tenant_id: 't1', message_retention_days: 30 }];
      case 'role_overrides': return [{ ...CTX, role_id: 'r', capabilities: '["a"]', updated_at: T0 }];
      case 'push_devices': return [{ tenant_id: 't1', token_or_endpoint: 'tok', user_id: 'ann', platform: 'fcm', p256dh: null, auth: null, created_at: T0, updated_at: T0 }];
      case 'push_devices_by_user': return [{ created_at: T0, token_or_endpoint: 'tok' }];
      case 'push_devices_by_endpoint': return [{ tenant_id: 't1' }];
      case 'message_days_by_tenant': return [{ day: '2026-01-01' }];
      // One entry in the day; a slice after it (keyset) finds none.
      case 'messages_by_tenant_day': return query.includes('(created_at, message_id) >') ? [] : [{ created_at: T0, message_id: 'm1', conversation_id: CONV, seq: 1 }];
      default: return [];
    }
  }
}

function open(bucketSize = 4): { client: RecordingClient; store: CassandraChatStore } {
  const client = new RecordingClient();
  return { client, store: new CassandraChatStore(client, { bucketSize }) };
}

const w = { ...REF, epoch: 3 };

/** Drives every store method once down its usual path. */
async function exerciseEverything(store: CassandraChatStore, client: RecordingClient): Promise<void> {
  const s = store;
  await s.conversations.gate(REF, 'ann');
  await s.conversations.claim(REF);
  await s.conversations.release({ ...REF, epoch: 4 });
  await s.conversations.update({ ...w, patch: { name: 'x' } });
  await s.conversations.get(REF, { kind: 'user', user_id: 'bob' }, 5);
  await s.conversations.list({ ...CTX, viewer: { kind: 'machine' }, limit: 5, members_preview: 2 });
  await s.conversations.list({ ...CTX, viewer: { kind: 'machine' }, type: 'GROUP', limit: 5, members_preview: 0, after: { last_activity_at: T0.toISOString(), conversation_id: CONV } });
  await s.conversations.list({ ...CTX, viewer: { kind: 'user', user_id: 'ann' }, limit: 5, members_preview: 0 });
  await s.conversations.list({ ...CTX, viewer: { kind: 'user', user_id: 'ann' }, limit: 5, members_preview: 0, after: { last_activity_at: T0.toISOString(), conversation_id: CONV } });
  await s.conversations.list({ ...CTX, viewer: { kind: 'machine' }, limit: 5, members_preview: 0, after: { last_activity_at: T0.toISOString(), conversation_id: CONV } });
  await s.conversations.list({ ...CTX, viewer: { kind: 'machine' }, type: 'CHANNEL', limit: 5, members_preview: 0 });
  await s.conversations.overview('t1');
  await s.messages.append({ ...w, message_id: 'new', seq: 11, sender_user_id: 'ann', sender_client_id: null, body: 'hi', message_type: 'TEXT', at: '2026-01-02T00:00:00.000Z' });
  await s.messages.append({ ...w, message_id: 'keyed', seq: 12, sender_user_id: 'ann', sender_client_id: null, body: 'hi', message_type: 'TEXT', at: '2026-01-02T00:00:00.000Z', retryable_id: true });
  client.world.messageAt = 3;
  await s.messages.edit({ ...w, message_id: 'm3', body: 'e' });
  await s.messages.get(REF, 'm3', 'ann');
  await s.reactions.add({ ...w, message_id: 'm3', user_id: 'ann', emoji: '🎉' });
  await s.reactions.remove({ ...w, message_id: 'm3', user_id: 'ann', emoji: '👍' });
  await s.messages.tombstone({ ...w, message_id: 'm3' });
  client.world.messageAt = null;
  await s.messages.list({ ...REF, viewer_user_id: 'ann', limit: 6, after: { seq: 9 } });
  await s.messages.deleteExpired({ tenant_id: 't1', days: 5, at: '2026-02-01T00:00:00.000Z', batch_size: 10 });
  // A full slice (batch_size 1) makes the pass read on after its last entry.
  await s.messages.deleteExpired({ tenant_id: 't1', days: 5, at: '2026-02-01T00:00:00.000Z', batch_size: 1 });
  await s.readState.markRead({ ...w, epoch: 4, user_id: 'bob', seq: 8 });
  await s.readState.get(REF, 'bob');
  await s.members.setRole({ ...w, user_id: 'bob', role: 'ADMIN' });
  await s.members.list({ ...REF, limit: 5, after: { joined_at: T0.toISOString(), member_id: CONV } });
  await s.members.filterActive(REF, ['ann', 'zed']);
  await s.members.conversationIdsOf(CTX, 'ann', 'GROUP');
  await s.members.setStatus({ ...w, user_id: 'bob', status: 'LEFT' });
  client.world.memberStatus = 'LEFT';
  await s.members.add({ ...w, member_id: CONV, user_id: 'bob', role: 'MEMBER' });
  client.world.memberStatus = 'ACTIVE';
  client.world.type = 'DIRECT';
  await s.conversations.softDelete(w);
  client.world.type = 'GROUP';
  await s.profiles.upsert('t1', [{ user_id: 'ann', display_name: 'Ann', avatar_url: null }], 'idp');
  await s.profiles.get('t1', ['ann']);
  await s.profiles.search('t1', 'An', 5);
  const by = { owner: 'o1', live: ['o1'] };
  await s.idempotency.claim(key, 'h', by, T0.toISOString());
  // An expired record is renewed: the insert answers it, the compare-and-set on created_at wins.
  const done = { '[applied]': false, ...key, request_hash: 'h', response_status: 200, response_body: null, created_at: T0, owner: 'o0' };
  client.world.lwt = (q) => (q.startsWith('INSERT INTO idempotency_keys') ? done : APPLIED());
  await s.idempotency.claim(key, 'h', by, '2026-01-03T00:00:00.000Z');
  // A pending claim of a dead owner is taken over: the compare-and-set on the owner wins.
  const dead = { ...done, response_status: null };
  client.world.lwt = (q) => (q.startsWith('INSERT INTO idempotency_keys') ? dead : APPLIED());
  await s.idempotency.claim(key, 'h', by, T0.toISOString());
  client.world.lwt = APPLIED;
  await s.idempotency.complete(key, 'o1', 201, '{}');
  await s.idempotency.release(key, 'o1');
  // A claim whose insert answers no outcome is let go of in the background (abandon).
  client.failOn = { prefix: 'INSERT INTO idempotency_keys', error: new Error('No connection available'), times: 1 };
  await assert.rejects(s.idempotency.claim(key, 'h', by, T0.toISOString()));
  await new Promise((resolve) => setTimeout(resolve, 300));
  await s.idempotency.get(key);
  await s.idempotency.sweep('2026-01-02T01:00:00.000Z');
  await s.settings.update('t1', { message_retention_days: 30 });
  await s.settings.update('t1', { message_retention_days: null });
  await s.settings.get('t1');
  await s.settings.listRetention();
  await s.roleOverrides.set('t1', null, 'r', ['b', 'a']);
  await s.roleOverrides.list('t1', 'app-1');
  await s.roleOverrides.delete('t1', null, 'r');
  await s.pushDevices.upsert({ tenant_id: 't1', user_id: 'bob', platform: 'web', token_or_endpoint: 'tok' });
  await s.pushDevices.listForUsers('t1', ['ann']);
  await s.pushDevices.delete('t1', 'ann', 'tok');
  await s.pushDevices.deleteEndpoint('tok');
  await s.conversations.create({ ...CTX, conversation_id: 'c-chan', type: 'CHANNEL', name: 'c', description: null, created_by_user_id: 'ann', created_by_client_id: null,
    members: [{ member_id: 'm-a', user_id: 'ann', role: 'OWNER' }] });
  // A DIRECT pair held by a deleted conversation (its release was lost) is taken over.
  client.world.deleted = true;
  client.world.lwt = (q) => (q.startsWith('INSERT INTO direct_pairs') ? { '[applied]': false, conversation_id: CONV } : APPLIED());
  await s.conversations.create({ ...CTX, conversation_id: 'c-new', type: 'DIRECT', name: null, description: null, created_by_user_id: 'ann', created_by_client_id: null,
    members: [{ member_id: 'm-a', user_id: 'ann', role: 'MEMBER' }, { member_id: 'm-b', user_id: 'bob', role: 'MEMBER' }] });
}

describe('Cassandra statements against the schema', () => {
  it('the schema parses into the tables the driver uses, each with a partition key', () => {
    assert.ok(SCHEMA.size >= 25, `${SCHEMA.size} tables`);
    for (const t of SCHEMA.values()) assert.ok(t.partitionKey.length > 0 && t.partitionKey.every((c) => t.columns.has(c)), t.name);
    const messages = SCHEMA.get('messages_by_conversation')!;
    assert.deepEqual([messages.partitionKey, messages.clustering], [['conversation_id', 'bucket'], ['seq']]);
  });

  it('every prepared statement names existing columns and restricts the full partition key', () => {
    for (const s of ALL) assert.deepEqual(problems(parseStatement(s.cql), SCHEMA), [], `${s.name}: ${s.cql}`);
  });

  it('no statement filters, and the schema file holds no ALLOW FILTERING or secondary index', () => {
    const text = splitStatements(SCHEMA_TEXT).join(';\n');
    assert.doesNotMatch(text, /ALLOW FILTERING|CREATE (CUSTOM )?INDEX|MATERIALIZED VIEW/i);
    for (const s of ALL) assert.doesNotMatch(s.cql, /ALLOW FILTERING|ORDER BY/i, s.name);
  });

  it('history reads come newest first from the clustering order, as do the listings', () => {
    assert.equal(SCHEMA.get('messages_by_conversation')!.order.get('seq'), 'DESC');
    for (const t of ['conversations_by_activity', 'conversations_by_type_activity', 'public_channels_by_activity']) {
      assert.deepEqual([...SCHEMA.get(t)!.order.values()], ['DESC', 'DESC'], t);
    }
    assert.deepEqual(parseStatement(MESSAGES_CQL.slice.cql).where.map((r) => `${r.columns.join()} ${r.op}`), ['conversation_id =', 'bucket =', 'seq >', 'seq <=']);
  });

  it('uniqueness and fencing are lightweight transactions on the right conditions', () => {
    const model = (c: Cql) => parseStatement(c.cql);
    assert.equal(model(CONVERSATIONS_CQL.insert).lwt, 'not-exists');
    assert.equal(model(DIRECT_PAIRS_CQL.claim).lwt, 'not-exists');
    assert.equal(model(IDEMPOTENCY_CQL.claim).lwt, 'not-exists');
    const conds = (c: Cql) => model(c).conditions.map((r) => `${r.columns.join()} ${r.op}`);
    assert.deepEqual(conds(IDEMPOTENCY_CQL.takeOver), ['owner =', 'response_status =', 'created_at =']);
    assert.deepEqual(conds(IDEMPOTENCY_CQL.complete), ['response_status =', 'owner =']);
    assert.deepEqual(conds(IDEMPOTENCY_CQL.release), ['response_status =', 'owner =']);
    assert.deepEqual(conds(CONVERSATIONS_CQL.claim), ['epoch =', 'deleted_at =', 'last_seq =']);
    assert.deepEqual(conds(CONVERSATIONS_CQL.fence), ['epoch <=', 'deleted_at =']);
    assert.deepEqual(conds(CONVERSATIONS_CQL.reserve), ['epoch <=', 'deleted_at =', 'last_seq =']);
    assert.deepEqual(conds(CONVERSATIONS_CQL.release), ['epoch =', 'last_seq =']);
    assert.equal(model(CONVERSATIONS_CQL.head).lwt, 'none', 'messages are written without Paxos');
    assert.deepEqual(conds(CONVERSATIONS_CQL.memberCount), ['epoch <=', 'deleted_at =', 'member_count =']);
    for (const s of ALL) assert.equal(s.lwt, model(s).lwt !== 'none', s.name);
  });
});

describe('Cassandra statements as the driver executes them (recording client)', () => {
  it('every call is prepared, at LOCAL_QUORUM, LWTs at LOCAL_SERIAL, with one parameter per bind marker', async () => {
    const { client, store } = open();
    await exerciseEverything(store, client);
    assert.ok(client.calls.length > 100);
    for (const c of client.calls) {
      const m = parseStatement(c.query);
      assert.deepEqual(problems(m, SCHEMA), [], c.query);
      assert.equal(m.markers, c.params.length, `markers vs params: ${c.query}`);
      assert.equal(c.options.prepare, true, c.query);
      assert.equal(c.options.consistency, consistencies.localQuorum, c.query);
      if (m.lwt !== 'none') {
        assert.equal(c.inBatch, false, `LWT in a batch: ${c.query}`);
        assert.equal(c.options.serialConsistency, consistencies.localSerial, c.query);
        assert.equal(c.options.isIdempotent, false, c.query);
      }
      assert.ok(!c.params.some((p) => p === undefined), `undefined bound in ${c.query}`);
    }
    const executed = new Set(client.calls.map((c) => c.query));
    const missed = ALL.filter((s) => !executed.has(s.cql)).map((s) => s.name).sort();
    assert.deepEqual(missed, []);
  });
});

describe('Cassandra driver behaviour over the recording client', () => {
  const calls = (c: RecordingClient, prefix: string): Call[] => c.calls.filter((x) => x.query.startsWith(prefix));
  const msg = (seq: number) => ({ ...w, message_id: `new-${seq}`, seq, sender_user_id: 'ann', sender_client_id: null, body: 'x', message_type: 'TEXT' as const });

  it('a history page crosses buckets newest first and stops when it has limit + 1 rows', async () => {
    const { client, store } = open(4);
    const page = await store.messages.list({ ...REF, viewer_user_id: null, limit: 5, after: { seq: 9 } });
    assert.deepEqual(page?.items.map((m) => m.seq), [8, 7, 6, 5, 4]);
    assert.deepEqual(page?.next, { seq: 4 });
    const slices = calls(client, 'SELECT conversation_id, bucket, seq').map((c) => c.params.slice(1));
    assert.deepEqual(slices, [[1, 4, 8, 6], [0, 0, 4, 2]], 'bucket 1 (seqs 5..8), then bucket 0 for the 2 rows still missing');
    const last = await store.messages.list({ ...REF, viewer_user_id: null, limit: 5, after: { seq: 4 } });
    assert.deepEqual([last?.items.map((m) => m.seq), last?.next], [[3, 2, 1], null], 'next is null exactly on the last page');
  });

  it('an append without a lease takes a seq range with one LWT from the reserved end it read; the next ones take none', async () => {
    const { client, store } = open();
    const r = await store.messages.append({ ...msg(11), at: '2026-01-02T00:00:00.000Z' });
    assert.equal(r?.created, true);
    const [lwt] = calls(client, 'UPDATE conversations SET epoch = ?, last_seq = ?');
    assert.deepEqual(lwt?.params, [3, 26, CONV, 3, 10], 'seqs 11..26 (the first range: 16), from last_seq 10 as read');
    const batch = client.calls.filter((c) => c.inBatch).map((c) => c.query.split(' (')[0]);
    assert.ok(batch.includes('INSERT INTO messages_by_conversation') && batch.includes('INSERT INTO message_by_id'));
    assert.ok(batch.includes('DELETE FROM conversations_by_activity WHERE tenant_id = ? AND application_id = ? AND last_activity_at = ? AND conversation_id = ?'), 'old activity key deleted');
    const head = client.calls.find((c) => c.inBatch && c.query.startsWith('UPDATE conversations USING TIMESTAMP ? SET head_seq'));
    assert.deepEqual(head?.params, [11, 11, new Date('2026-01-02T00:00:00.000Z'), CONV], 'the head, last-write-wins by seq');
    const bump = calls(client, 'UPDATE conversations USING TIMESTAMP ? SET revision')[0]!;
    assert.ok(client.calls.indexOf(bump) > client.calls.indexOf(head!), 'revision moves after the write');
    assert.equal(bump.params[0], bump.params[1]);
    assert.ok(Number(bump.params[1]) > 7);
    for (let seq = 12; seq <= 26; seq += 1) assert.equal((await store.messages.append(msg(seq)))?.created, true);
    assert.equal(client.calls.filter((c) => / IF /.test(c.query)).length, 1, '16 appends, one Paxos round');
    await store.messages.append(msg(27));
    const next = calls(client, 'UPDATE conversations SET epoch = ?, last_seq = ?');
    assert.deepEqual(next[1]?.params, [3, 58, CONV, 3, 26], 'the next range (32) from the end of the last');
  });

  it('a seq the lease issued is SeqConflictError unless that very message failed and is retried', async () => {
    const { client, store } = open();
    await store.messages.append(msg(11));
    await assert.rejects(store.messages.append({ ...msg(11), message_id: 'other' }), { code: 'seq_conflict' });
    const realBatch = client.batch.bind(client);
    let fail = true;
    client.batch = async (q, o) => {
      if (!fail) return realBatch(q, o);
      fail = false;
      throw new Error('batch timeout');
    };
    await assert.rejects(store.messages.append(msg(12)), /batch timeout/);
    assert.equal((await store.messages.append(msg(12)))?.created, true, 'the retry of the failed message writes it');
    await assert.rejects(store.messages.append(msg(12)), { code: 'seq_conflict' }, 'written now: another attempt is a conflict (the mock has no message_by_id row)');
  });

  it('a seq at or below last_seq is SeqConflictError before any LWT; a lost LWT is classified', async () => {
    const { client, store } = open();
    await assert.rejects(store.messages.append(msg(10)), { code: 'seq_conflict' });
    assert.equal(client.calls.filter((c) => / IF /.test(c.query)).length, 0);
    client.world.lwt = () => ({ '[applied]': false, epoch: 9, deleted_at: null, last_seq: 10 });
    await assert.rejects(store.messages.append(msg(11)), StaleEpochError);
    client.world.lwt = () => ({ '[applied]': false, epoch: 3, deleted_at: T0, last_seq: 10 });
    assert.equal(await store.messages.append(msg(11)), null, 'deleted meanwhile');
    await assert.rejects(store.messages.append({ ...msg(11), epoch: 2 }), StaleEpochError, 'a lower epoch than the one read');
  });

  it('one caller’s unawaited writes to a conversation run in call order', async () => {
    const { client, store } = open();
    client.delayMs = 2;
    client.world.messageAt = 3;
    const edit = store.messages.edit({ ...w, message_id: 'm3', body: 'first' });
    const tomb = store.messages.tombstone({ ...w, message_id: 'm3' });
    const react = store.reactions.add({ ...w, message_id: 'm3', user_id: 'ann', emoji: '🎉' });
    await Promise.all([edit, tomb, react]);
    const order = client.calls.filter((c) => c.query.startsWith('UPDATE messages_by_conversation') || c.query.startsWith('INSERT INTO reactions')).map((c) => c.query);
    assert.deepEqual(order.map((q) => (q.includes('EDITED') ? 'edit' : q.includes('DELETED') ? 'tombstone' : 'react')), ['edit', 'tombstone', 'react']);
  });

  it('conversation updates bind unset for the fields a patch leaves alone', async () => {
    const { client, store } = open();
    await store.conversations.update({ ...w, patch: { description: null } });
    const [u] = calls(client, 'UPDATE conversations SET epoch = ?, name = ?');
    const unset = (cassandra.types as unknown as { unset: object }).unset;
    assert.deepEqual(u?.params.slice(1, 5), [unset, null, unset, unset]);
  });

  it('read markers are written USING TIMESTAMP <marker>, clamped to last_seq, never moved back', async () => {
    const { client, store } = open();
    const up = await store.readState.markRead({ ...w, user_id: 'bob', seq: 99 });
    assert.deepEqual([up?.last_read_seq, up?.changed], [10, true]);
    const [write] = calls(client, 'INSERT INTO read_state');
    assert.deepEqual([write?.params[2], write?.params[4]], [10, 10]);
    const back = await store.readState.markRead({ ...w, user_id: 'bob', seq: 2 });
    assert.deepEqual([back?.last_read_seq, back?.changed], [4, false], 'the stored marker (4) stays');
    assert.equal(calls(client, 'INSERT INTO read_state').length, 1);
  });

  it('a lightweight transaction that timed out in Paxos is re-run; other errors are not', async () => {
    const { client, store } = open();
    const fence = 'UPDATE conversations SET epoch = ? WHERE';
    const cas = Object.assign(new Error('CAS timeout'), { code: 0x1100, writeType: 'CAS' });
    client.failOn = { prefix: fence, error: cas, times: 2 };
    const marked = await store.readState.markRead({ ...w, epoch: 4, user_id: 'bob', seq: 1 });
    assert.equal(marked?.last_read_seq, 4);
    assert.equal(calls(client, fence).length, 3, 'two timeouts, then applied');
    client.failOn = { prefix: fence, error: new Error('unrelated'), times: 1 };
    await assert.rejects(store.readState.markRead({ ...w, epoch: 4, user_id: 'bob', seq: 1 }), /unrelated/);
    assert.equal(calls(client, fence).length, 4);
  });

  it('driver errors that mean "not now" become StoreUnavailableError (a 503); others stay as they are', async () => {
    const { client, store } = open();
    const { ResponseError, NoHostAvailableError, OperationTimedOutError } = cassandra.errors;
    const codes = cassandra.types.responseErrorCodes;
    const read = (): Promise<unknown> => store.conversations.get(REF, { kind: 'machine' }, 0);
    for (const error of [
      new ResponseError(codes.unavailableException, 'Cannot achieve consistency level LOCAL_QUORUM'),
      new ResponseError(codes.readTimeout, 'Operation timed out - received only 1 responses.'),
      new ResponseError(codes.overloaded, 'overloaded'),
      new ResponseError(codes.readFailure, 'Server failure during read query at consistency ONE (1 responses were required but only 0 replicas responded, 1 failed)'),
      new ResponseError(codes.writeFailure, 'Server failure during write query at consistency LOCAL_QUORUM'),
      new NoHostAvailableError({}, 'All host(s) tried for query failed'),
      new Error('No connection available'), // host-connection-pool.js, a pool emptied by a dead host
      new OperationTimedOutError('The host 127.0.0.1:9042 did not reply before timeout 12000 ms'),
      Object.assign(new (cassandra.errors.DriverError as unknown as new (m: string) => Error)('Socket was closed'), { isSocketError: true }),
    ]) {
      client.failOn = { prefix: 'SELECT', error, times: 1 };
      await assert.rejects(read(), (e: unknown) => e instanceof StoreUnavailableError && e.cause === error, error.message);
    }
    client.failOn = { prefix: 'SELECT', error: new ResponseError(codes.syntaxError, 'line 1:0 no viable alternative'), times: 1 };
    await assert.rejects(read(), (e: unknown) => !(e instanceof StoreUnavailableError));
    const unavailable = new ResponseError(codes.unavailableException, 'Cannot achieve consistency level LOCAL_SERIAL');
    client.failOn = { prefix: 'UPDATE conversations SET epoch = ? WHERE', error: unavailable, times: 1 };
    await assert.rejects(store.readState.markRead({ ...w, epoch: 4, user_id: 'bob', seq: 1 }), StoreUnavailableError, 'an LWT too');
    const realBatch = client.batch.bind(client);
    client.batch = async () => {
      client.batch = realBatch;
      throw new ResponseError(codes.writeTimeout, 'Operation timed out - received only 1 responses.');
    };
    await assert.rejects(store.messages.append(msg(11)), StoreUnavailableError, 'a batch too');
  });

  it('argument errors are rejections, as in the SQLite driver', async () => {
    const { store } = open();
    await assert.rejects(store.conversations.list({ ...CTX, viewer: { kind: 'machine' }, limit: 0, members_preview: 0 }), RangeError);
    await assert.rejects(store.profiles.search('t1', '', 5), RangeError);
    await assert.rejects(store.members.list({ ...REF, limit: 5, after: { joined_at: 'x', member_id: 'y' } }), InvalidPositionError);
    await assert.rejects(store.messages.append({ ...msg(1), seq: 0 }), RangeError);
  });

  it('close waits for operations in flight, shuts the client down once, then refuses', async () => {
    const { client, store } = open();
    client.delayMs = 5;
    const pending = store.conversations.get(REF, { kind: 'machine' }, 0);
    await store.close();
    assert.equal((await pending)?.conversation_id, CONV);
    await store.close();
    assert.equal(client.shutdowns, 1);
    await assert.rejects(store.settings.get('t1'), StoreClosedError);
    await assert.rejects(store.messages.append(msg(11)), StoreClosedError);
  });
});
