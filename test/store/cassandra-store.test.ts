/**
 * The store contract against a real Cassandra or ScyllaDB cluster. Runs only when
 * CASSANDRA_CONTACT_POINTS is set (e.g. `127.0.0.1:9042`; CASSANDRA_LOCAL_DC defaults to
 * datacenter1, CASSANDRA_KEYSPACE to chat_contract_test, replication factor 1): no server can run
 * on the development machine, where test/store/cassandra-statements.test.ts checks the driver's
 * statements instead. Each contract test uses its own random tenant, so the keyspace needs no
 * cleanup between runs.
 *
 * Run twice: with the production bucket size, and with 4 seqs per bucket so that history pages,
 * unread counts and retention cross message partitions inside the suite's small conversations.
 */
import { describe, it } from 'node:test';
import { storeContract } from '../../src/store/contract.ts';
import { CassandraChatStore } from '../../src/store/cassandra/cassandra-store.ts';
import { createStore, type CassandraStoreConfig } from '../../src/store/index.ts';

const contactPoints = (process.env.CASSANDRA_CONTACT_POINTS ?? '').split(',').map((p) => p.trim()).filter(Boolean);

if (contactPoints.length === 0) {
  describe('ChatStore contract: cassandra', () => {
    it('needs a server: set CASSANDRA_CONTACT_POINTS=host[:port] to run the contract against Cassandra/ScyllaDB', { skip: 'CASSANDRA_CONTACT_POINTS is not set (no Cassandra server here)' }, () => {});
  });
} else {
  const config: CassandraStoreConfig = {
    driver: 'cassandra',
    contactPoints,
    localDataCenter: process.env.CASSANDRA_LOCAL_DC ?? 'datacenter1',
    keyspace: process.env.CASSANDRA_KEYSPACE ?? 'chat_contract_test',
    replicationFactor: 1,
    username: process.env.CASSANDRA_USERNAME ?? null,
    password: process.env.CASSANDRA_PASSWORD ?? null,
  };
  storeContract('cassandra', () => createStore(config));
  storeContract('cassandra, 4 seqs per bucket', () => CassandraChatStore.open(config, { bucketSize: 4 }));
}
