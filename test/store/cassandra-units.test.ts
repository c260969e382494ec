/**
 * Plain unit tests of the Cassandra driver's pure parts (no client at all): bucket arithmetic,
 * page positions (cursor round trips), the schema/statement model the statement tests rely on,
 * keyspace and config checks, revisions and DIRECT pair order, and the handle's choice of logged
 * or unlogged batches (a stand-in client).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bucketOf, bucketRange, historyStart, newestFirstSlices, oldestFirstSlices } from '../../src/store/cassandra/buckets.ts';
import { checkConfig, replicationOf } from '../../src/store/cassandra/cassandra-store.ts';
import { byActivity, isAfter } from '../../src/store/cassandra/conversation-listing.ts';
import { nextRevision } from '../../src/store/cassandra/conversations.ts';
import cassandra from 'cassandra-driver';
import { CassandraHandle, cql, isBatchlogFailure, type CqlClient } from '../../src/store/cassandra/cql.ts';
import { pairOf } from '../../src/store/cassandra/direct-pairs.ts';
import { hourOf } from '../../src/store/cassandra/idempotency.ts';
import { keyspaceCql } from '../../src/store/cassandra/migrations.ts';
import { headOf } from '../../src/store/cassandra/profiles.ts';
import { prefixSuccessor } from '../../src/store/inputs.ts';
import { countMarkers, parseSchema, parseStatement, problems } from '../../src/store/cassandra/schema-model.ts';
import { InvalidPositionError } from '../../src/store/errors.ts';
import type { CassandraStoreConfig } from '../../src/store/index.ts';

describe('message buckets', () => {
  it('maps seqs to buckets of BUCKET_SIZE, 1-based', () => {
    assert.deepEqual([1, 1000, 1001, 2000, 2001].map((s) => bucketOf(s)), [0, 0, 1, 1, 2]);
    assert.deepEqual([1, 4, 5, 9].map((s) => bucketOf(s, 4)), [0, 0, 1, 2]);
    assert.deepEqual(bucketRange(2, 4), { first: 9, last: 12 });
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => bucketOf(bad), RangeError);
  });

  it('walks newest first from a seq down to 1, one slice per bucket', () => {
    assert.deepEqual([...newestFirstSlices(10, 4)], [{ bucket: 2, low: 8, top: 10 }, { bucket: 1, low: 4, top: 8 }, { bucket: 0, low: 0, top: 4 }]);
    assert.deepEqual([...newestFirstSlices(8, 4)], [{ bucket: 1, low: 4, top: 8 }, { bucket: 0, low: 0, top: 4 }]);
    assert.deepEqual([...newestFirstSlices(0, 4)], [], 'an empty conversation reads nothing');
  });

  it('covers (marker, last_seq] for unread counts, and nothing when caught up', () => {
    assert.deepEqual([...oldestFirstSlices(3, 9, 4)], [{ bucket: 0, low: 3, top: 4 }, { bucket: 1, low: 4, top: 8 }, { bucket: 2, low: 8, top: 9 }]);
    assert.deepEqual([...oldestFirstSlices(4, 4, 4)], []);
    assert.deepEqual([...oldestFirstSlices(0, 1, 4)], [{ bucket: 0, low: 0, top: 1 }]);
  });
});

describe('page positions (cursor round trips)', () => {
  it('history: a page ending at seq s continues at s - 1, clamped to last_seq; shapes are checked', () => {
    assert.equal(historyStart(null, 42), 42);
    assert.equal(historyStart({ seq: 7 }, 42), 6);
    assert.equal(historyStart({ seq: 99 }, 42), 42, 'a position past last_seq (retention, a stale cursor) starts at the top');
    for (const bad of [{ seq: 0 }, { seq: '3' }, { seq: 3, x: 1 }, [], 'x']) {
      assert.throws(() => historyStart(bad as never, 42), InvalidPositionError);
    }
  });

  it('listing: keyset order is activity DESC then id DESC, and `after` is exclusive', () => {
    const a = { last_activity_at: '2026-01-01T00:00:02.000Z', conversation_id: 'b' };
    const b = { last_activity_at: '2026-01-01T00:00:02.000Z', conversation_id: 'a' };
    const c = { last_activity_at: '2026-01-01T00:00:01.000Z', conversation_id: 'z' };
    assert.deepEqual([c, b, a].sort(byActivity), [a, b, c]);
    assert.deepEqual([a, b, c].filter((x) => isAfter(x, a)), [b, c]);
    assert.deepEqual([a, b, c].filter((x) => isAfter(x, null)), [a, b, c]);
  });
});

describe('schema and statement model', () => {
  const tables = parseSchema(`
    -- a comment; with a semicolon
    CREATE TABLE IF NOT EXISTS t (p1 text, p2 int, c1 timestamp, c2 text, v text, PRIMARY KEY ((p1, p2), c1, c2))
      WITH CLUSTERING ORDER BY (c1 DESC, c2 ASC);
    CREATE TABLE s (id text PRIMARY KEY, v text);`);

  it('reads columns, partition key, clustering and its order', () => {
    const t = tables.get('t')!;
    assert.deepEqual([t.partitionKey, t.clustering, [...t.order]], [['p1', 'p2'], ['c1', 'c2'], [['c1', 'DESC'], ['c2', 'ASC']]]);
    assert.deepEqual(tables.get('s')!.partitionKey, ['id']);
  });

  it('finds what Cassandra would refuse or filter', () => {
    const check = (q: string): string[] => problems(parseStatement(q), tables);
    assert.deepEqual(check('SELECT v FROM t WHERE p1 = ? AND p2 = ? AND (c1, c2) < (?, ?) LIMIT ?'), []);
    assert.match(check('SELECT v FROM t WHERE p1 = ?').join(), /p2 not restricted/);
    assert.match(check('SELECT v FROM t WHERE p1 = ? AND p2 = ? AND v = ?').join(), /regular column v/);
    assert.match(check('SELECT nope FROM t WHERE p1 = ? AND p2 = ?').join(), /unknown column t.nope/);
    assert.match(check('SELECT v FROM t WHERE p1 = ? AND p2 = ? AND c2 = ?').join(), /skips a preceding column/);
    assert.match(check('UPDATE t SET v = ? WHERE p1 = ? AND p2 = ? AND c1 = ?').join(), /full primary key \(c2\)/);
    assert.match(check('INSERT INTO t (p1, p2, c1, v) VALUES (?, ?, ?, ?)').join(), /lacks key column c2/);
    assert.match(check('UPDATE s SET v = ? WHERE id = ? IF id = ?').join(), /IF condition on key column id/);
    assert.throws(() => parseStatement('SELECT v FROM t WHERE v = ? ALLOW FILTERING'), /ALLOW FILTERING/);
  });

  it('counts bind markers outside string literals, and tells LWTs apart', () => {
    assert.equal(countMarkers("UPDATE s SET v = '?' , w = ? WHERE id = ?"), 2);
    assert.equal(parseStatement('INSERT INTO s (id, v) VALUES (?, ?) IF NOT EXISTS USING TTL ?').lwt, 'not-exists');
    assert.equal(parseStatement('DELETE FROM s WHERE id = ? IF EXISTS').lwt, 'exists');
    assert.equal(cql('UPDATE s SET v = ? WHERE id = ? IF v = ?').lwt, true);
    assert.equal(cql('SELECT v FROM s WHERE id = ?').lwt, false);
  });
});

describe('keyspace, config, revisions, pairs', () => {
  const base: CassandraStoreConfig = { driver: 'cassandra', contactPoints: ['127.0.0.1'], localDataCenter: 'dc1', keyspace: 'chat' };

  it('renders the keyspace statement from the replication config and refuses injection', () => {
    assert.equal(keyspaceCql('chat', replicationOf({ ...base, replicationFactor: 5 })),
      "CREATE KEYSPACE IF NOT EXISTS chat WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '5'} AND durable_writes = true");
    assert.match(keyspaceCql('chat', replicationOf(base)), /'dc1': '3'/);
    assert.match(keyspaceCql('k', { class: 'SimpleStrategy', replication_factor: 1 }), /'class': 'SimpleStrategy', 'replication_factor': '1'/);
    assert.doesNotMatch(keyspaceCql('chat', replicationOf(base)), /tablets/, 'Apache Cassandra knows no tablets option');
    assert.match(keyspaceCql('chat', replicationOf(base), { tablets: false }), / AND tablets = \{'enabled': false\}$/, 'ScyllaDB: no tablets, or no LWT');
    assert.throws(() => keyspaceCql('chat; DROP', { class: 'SimpleStrategy', replication_factor: 1 }), RangeError);
    assert.throws(() => keyspaceCql('chat', { class: 'NetworkTopologyStrategy', "dc1'": 3 }), RangeError);
  });

  it('refuses a config that cannot work, with a message naming the setting', () => {
    assert.doesNotThrow(() => checkConfig(base));
    assert.throws(() => checkConfig({ ...base, contactPoints: [] }), /contactPoints/);
    assert.throws(() => checkConfig({ ...base, localDataCenter: '' }), /localDataCenter/);
    assert.throws(() => checkConfig({ ...base, keyspace: 'bad-name' }), /keyspace/);
    assert.throws(() => checkConfig({ ...base, password: 'x' }), /without username/);
    assert.throws(() => checkConfig({ ...base, replicationFactor: 0 }), /replicationFactor/);
  });

  it('a revision always grows past the one read, even when the clock is behind it', () => {
    assert.equal(nextRevision(0, 1000), 1_000_000);
    assert.equal(nextRevision(5_000_000, 1000), 5_000_001);
  });

  it('orders a DIRECT pair by UTF-8 bytes (Cassandra text order), either way round', () => {
    assert.deepEqual(pairOf('bob', 'ann'), { user_low: 'ann', user_high: 'bob' });
    assert.deepEqual(pairOf('\u{FF5E}', '\u{1F600}'), { user_low: '\u{FF5E}', user_high: '\u{1F600}' });
  });

  it('search ranges and idempotency hours', () => {
    assert.equal(prefixSuccessor('al'), 'am');
    assert.equal(prefixSuccessor('a\u{D7FF}'), 'a\u{E000}');
    assert.equal(headOf('álvaro'), 'á');
    assert.equal(hourOf('2026-01-01T05:59:59.999Z').toISOString(), '2026-01-01T05:00:00.000Z');
  });
});

describe('batches while a replica is down (CassandraHandle.batch)', () => {
  const A = cql('INSERT INTO a (k) VALUES (?)');
  const B = cql('INSERT INTO b (k) VALUES (?)');
  /** A client recording how each batch went; `refuse` answers logged batches as a batchlog the dead node never acknowledged. */
  function client(refuse: boolean): CqlClient & { sent: boolean[] } {
    const sent: boolean[] = [];
    return {
      sent,
      execute: async () => ({ rows: [] }),
      shutdown: async () => {},
      batch: async (_q, o) => {
        sent.push(o.logged === true);
        if (refuse && o.logged) {
          const e = new cassandra.errors.ResponseError(cassandra.types.responseErrorCodes.writeTimeout, 'Operation timed out - received only 1 responses.');
          throw Object.assign(e, { writeType: 'BATCH_LOG' });
        }
        return {};
      },
    };
  }

  it('a batch refused at its batchlog goes again unlogged at once, and the next ones unlogged', async () => {
    const c = client(true);
    const h = new CassandraHandle(c);
    await h.batch([[A, [1]], [B, [1]]]);
    await h.batch([[A, [2]], [B, [2]]]);
    assert.deepEqual(c.sent, [true, false, false]);
    assert.equal(h.counts.unlogged, 2);
  });

  it('logged while every host is up; unlogged while the driver holds one down; a write timeout of another kind is the caller’s', async () => {
    const c = client(false);
    const h = new CassandraHandle(c);
    let down = false;
    h.replicaDown = () => down;
    await h.batch([[A, [1]], [B, [1]]]);
    down = true;
    await h.batch([[A, [2]], [B, [2]]]);
    assert.deepEqual(c.sent, [true, false]);
    assert.equal(isBatchlogFailure(Object.assign(new cassandra.errors.ResponseError(cassandra.types.responseErrorCodes.writeTimeout, 'x'), { writeType: 'BATCH' })), false, 'the batch itself timed out: ambiguous, not re-sent');
    assert.equal(isBatchlogFailure(Object.assign(new cassandra.errors.ResponseError(cassandra.types.responseErrorCodes.unavailableException, 'x'), { consistencies: cassandra.types.consistencies.two })), true);
    assert.equal(isBatchlogFailure(Object.assign(new cassandra.errors.ResponseError(cassandra.types.responseErrorCodes.unavailableException, 'x'), { consistencies: cassandra.types.consistencies.localQuorum })), false);
  });
});
