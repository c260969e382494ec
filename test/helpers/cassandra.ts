/**
 * A real Apache Cassandra for a test file: started in `before` on free loopback ports (the
 * runner in cluster/cassandra, jars from the Maven cache), stopped and its data removed in
 * `after`. No skip: a machine that cannot run Cassandra (no Java 17, no jars and no Maven)
 * fails the file's tests with the runner's one-line reason.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { startCassandra, type CassandraCluster, type StartCassandraOptions } from '../../cluster/cassandra/runner.ts';
import type { CassandraStoreConfig } from '../../src/store/index.ts';
import { CassandraChatStore, type CassandraOpenOptions } from '../../src/store/cassandra/cassandra-store.ts';

export type { CassandraCluster } from '../../cluster/cassandra/runner.ts';

/**
 * Starts Cassandra in a fresh temporary directory; `stop()` of the answer also removes it. Schema
 * changes are not flushed as they happen (fastSchema: 5x faster keyspaces) unless the caller
 * restarts nodes (`fastSchema: false`).
 */
export async function startTestCassandra(options: Omit<StartCassandraOptions, 'dataDir'> = {}): Promise<CassandraCluster> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-cassandra-'));
  try {
    const c = await startCassandra({ stopGraceMs: 0, fastSchema: true, ...options, dataDir });
    const stop = c.stop.bind(c);
    return Object.assign(c, {
      async stop() {
        await stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    });
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * One Cassandra for the test file: a getter, valid inside tests (after `before` ran). `setup`
 * runs in the same hook once it is up: Node 20 runs a file's root-level `before` hooks
 * concurrently, so a second hook could not wait for this one.
 */
export function useTestCassandra(options: Omit<StartCassandraOptions, 'dataDir'> = {}, setup?: (c: CassandraCluster) => Promise<void>): () => CassandraCluster {
  let c: CassandraCluster | null = null;
  before(async () => {
    const started = await startTestCassandra(options);
    c = started;
    await setup?.(started);
  });
  after(async () => {
    await c?.stop();
  });
  return () => {
    if (!c) throw new Error('the test Cassandra is not started yet (use it inside a test)');
    return c;
  };
}

/** A store config on that Cassandra: its own keyspace, replication factor 1 (one test node). */
export function testStoreConfig(c: CassandraCluster, keyspace: string): CassandraStoreConfig {
  return { driver: 'cassandra', contactPoints: c.contactPoints, localDataCenter: c.localDataCenter, keyspace, replicationFactor: 1, username: null, password: null };
}

/**
 * Stores of one keyspace for a test file: on CASSANDRA_CONTACT_POINTS (CASSANDRA_LOCAL_DC) when
 * set, else on a Cassandra of the file's own. `open` remembers each store in `opened` for the
 * file to close.
 */
export function useCassandraStores(keyspace: string): {
  config: () => CassandraStoreConfig;
  open: (options?: CassandraOpenOptions) => Promise<CassandraChatStore>;
  opened: CassandraChatStore[];
} {
  const external = (process.env.CASSANDRA_CONTACT_POINTS ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  const cassandraOf = external.length > 0 ? null : useTestCassandra();
  const config = (): CassandraStoreConfig =>
    cassandraOf === null
      ? { driver: 'cassandra', contactPoints: external, localDataCenter: process.env.CASSANDRA_LOCAL_DC ?? 'datacenter1', keyspace, replicationFactor: 1 }
      : testStoreConfig(cassandraOf(), keyspace);
  const opened: CassandraChatStore[] = [];
  const open = async (options: CassandraOpenOptions = {}): Promise<CassandraChatStore> => {
    const store = await CassandraChatStore.open(config(), options);
    opened.push(store);
    return store;
  };
  return { config, open, opened };
}
