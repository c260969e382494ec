/**
 * The store contract on a live Apache Cassandra: a node of its own, started for this file by the
 * runner (cluster/cassandra) on free loopback ports and stopped at the end. Nothing is skipped:
 * a machine that cannot start Cassandra fails these tests.
 *
 * CASSANDRA_CONTACT_POINTS=host[:port],... runs the same suites against a server of your own
 * instead (ScyllaDB, a remote cluster; CASSANDRA_LOCAL_DC defaults to datacenter1, credentials
 * from CASSANDRA_USERNAME / CASSANDRA_PASSWORD).
 *
 * Run twice, each in its own keyspace: with the production bucket size and seq ranges, and with 4
 * seqs per bucket and seq ranges of 2 to 4 seqs, so that history pages, unread counts and
 * retention cross message partitions, and appends cross seq ranges, inside the suite's small
 * conversations. Each contract test uses its own random tenant, so a keyspace needs
 * no cleanup between tests.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import cassandra from 'cassandra-driver';
import { storeContract } from '../../src/store/contract.ts';
import { CassandraChatStore } from '../../src/store/cassandra/cassandra-store.ts';
import { createStore, type CassandraStoreConfig } from '../../src/store/index.ts';
import { testStoreConfig, useTestCassandra } from '../helpers/cassandra.ts';

const external = (process.env.CASSANDRA_CONTACT_POINTS ?? '').split(',').map((p) => p.trim()).filter(Boolean);

const KEYSPACES = ['chat_contract', 'chat_contract_b4'];
// The keyspaces and tables are created once, before the tests, instead of by the first test of
// each suite (a schema change waits for agreement: seconds on a busy machine).
const createKeyspaces = async (configOf: (keyspace: string) => CassandraStoreConfig): Promise<void> => {
  for (const keyspace of KEYSPACES) await (await createStore(configOf(keyspace))).close();
};

let configOf: (keyspace: string) => CassandraStoreConfig;
if (external.length > 0) {
  configOf = (keyspace) => ({
    driver: 'cassandra',
    contactPoints: external,
    localDataCenter: process.env.CASSANDRA_LOCAL_DC ?? 'datacenter1',
    keyspace,
    replicationFactor: 1,
    username: process.env.CASSANDRA_USERNAME ?? null,
    password: process.env.CASSANDRA_PASSWORD ?? null,
  });
  before(() => createKeyspaces(configOf));
} else {
  const cassandra = useTestCassandra({}, (c) => createKeyspaces((keyspace) => testStoreConfig(c, keyspace)));
  configOf = (keyspace) => testStoreConfig(cassandra(), keyspace);
}

storeContract('cassandra', () => createStore(configOf('chat_contract')));
storeContract('cassandra, 4 seqs per bucket, ranges of 2-4 seqs', () => CassandraChatStore.open(configOf('chat_contract_b4'), { bucketSize: 4, seqRanges: { first: 2, max: 4 } }));

describe('Cassandra store: idempotency rows from before owners (schema 2)', () => {
  it('a pending claim without an owner is a dead process\'s: taken over at once (IF owner = null), created_at kept', async () => {
    const config = configOf('chat_contract');
    const store = await createStore(config);
    const client = new cassandra.Client({ contactPoints: config.contactPoints, localDataCenter: config.localDataCenter, keyspace: config.keyspace });
    const key = { principal_key: 'user:t:ann', idempotency_key: `legacy-${Date.now()}`, method_route: 'POST /x' };
    const at = new Date().toISOString();
    try {
      await client.execute(
        'INSERT INTO idempotency_keys (principal_key, idempotency_key, method_route, request_hash, created_at) VALUES (?, ?, ?, ?, ?) USING TTL 3600',
        [key.principal_key, key.idempotency_key, key.method_route, 'h', new Date(at)],
        { prepare: true },
      );
      const by = { owner: 'p1', live: ['p1'] };
      assert.deepEqual(await store.idempotency.claim(key, 'h', by), { claimed: true, created_at: at });
      const again = await store.idempotency.claim(key, 'h', by);
      assert.ok(!again.claimed && again.record.owner === 'p1');
      assert.equal(await store.idempotency.complete(key, 'p1', 201, '{}'), true);
    } finally {
      await client.shutdown();
      await store.close();
    }
  });
});
