/**
 * The Cassandra schema's life cycle on a live node (started for this file by the runner): the
 * schema is applied at start on a fresh keyspace, left alone on an up-to-date one, completed on
 * one made before versions were recorded, survives nodes starting together, and a node refuses
 * to start on a keyspace of a newer release with one line naming both versions.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import cassandra from 'cassandra-driver';
import { CassandraChatStore } from '../../src/store/cassandra/cassandra-store.ts';
import { applySchema, schemaFiles, schemaVersion } from '../../src/store/cassandra/migrations.ts';
import { SchemaTooNewError } from '../../src/store/errors.ts';
import { createStore } from '../../src/store/index.ts';
import { testStoreConfig, useTestCassandra, type CassandraCluster } from '../helpers/cassandra.ts';
import { startTestNode } from '../helpers/processes.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const cassandraNode = useTestCassandra();
const FILES = schemaFiles();
const KNOWN = FILES.length;
const TABLES = FILES.flatMap((f) => f.statements).filter((s) => /^CREATE TABLE/i.test(s)).length;

let n = 0;
const freshKeyspace = (): string => `chat_schema_${process.pid}_${(n += 1)}`;

async function withClient<T>(c: CassandraCluster, fn: (client: cassandra.Client) => Promise<T>, keyspace?: string): Promise<T> {
  const client = new cassandra.Client({ contactPoints: c.contactPoints, localDataCenter: c.localDataCenter, ...(keyspace === undefined ? {} : { keyspace }) });
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.shutdown();
  }
}

/** Tables of the keyspace (schema_migrations included) and its recorded versions. */
async function inspect(keyspace: string): Promise<{ tables: number; versions: number[] }> {
  return withClient(cassandraNode(), async (client) => {
    const tables = await client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [keyspace], { prepare: true });
    const names = tables.rows.map((r) => String(r.get('table_name')));
    const versions = names.includes('schema_migrations')
      ? (await client.execute(`SELECT version FROM ${keyspace}.schema_migrations WHERE scope = 'chat'`)).rows.map((r) => Number(r.get('version')))
      : [];
    return { tables: names.length, versions };
  });
}

function nodeEnv(keyspace: string): Record<string, string> {
  const c = cassandraNode();
  return {
    CHAT_STORE_DRIVER: 'cassandra',
    CHAT_CASSANDRA_CONTACT_POINTS: c.contactPoints.join(','),
    CHAT_CASSANDRA_LOCAL_DC: c.localDataCenter,
    CHAT_CASSANDRA_KEYSPACE: keyspace,
    CHAT_CASSANDRA_REPLICATION_FACTOR: '1',
    CHAT_RETENTION_INTERVAL_MS: '0',
    CHAT_WEB_PUSH: 'false',
  };
}

describe('cassandra schema life cycle', () => {
  test('a fresh keyspace gets every table and its version recorded; an up-to-date one gets no schema change', async () => {
    const keyspace = freshKeyspace();
    const store = await createStore(testStoreConfig(cassandraNode(), keyspace));
    await store.close();
    assert.deepEqual(await inspect(keyspace), { tables: TABLES + 1, versions: FILES.map((f) => f.version).reverse() });
    // Opened again: one read of the version, nothing applied.
    const applied = await withClient(cassandraNode(), (client) => applySchema(client, keyspace), keyspace);
    assert.deepEqual(applied, []);
    const again = await createStore(testStoreConfig(cassandraNode(), keyspace));
    await again.close();
    assert.deepEqual(await inspect(keyspace), { tables: TABLES + 1, versions: FILES.map((f) => f.version).reverse() });
  });

  test('a keyspace made before versions were recorded is completed, and its data kept', async () => {
    const keyspace = freshKeyspace();
    await withClient(cassandraNode(), async (client) => {
      await client.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
      await client.execute(`USE ${keyspace}`);
      for (const s of FILES[0]!.statements) await client.execute(s);
      await client.execute("INSERT INTO tenant_settings (tenant_id, message_retention_days) VALUES ('t-old', 7)");
    });
    assert.equal(await withClient(cassandraNode(), (client) => schemaVersion(client), keyspace), null);
    const store = await createStore(testStoreConfig(cassandraNode(), keyspace));
    try {
      assert.equal((await store.settings.get('t-old'))?.message_retention_days, 7, 'the data written before is still there');
    } finally {
      await store.close();
    }
    assert.deepEqual(await inspect(keyspace), { tables: TABLES + 1, versions: FILES.map((f) => f.version).reverse() });
  });

  test('stores opening a fresh keyspace all at once agree on one schema', async () => {
    const keyspace = freshKeyspace();
    const opened = await Promise.allSettled(Array.from({ length: 4 }, () => createStore(testStoreConfig(cassandraNode(), keyspace))));
    await Promise.all(opened.map((o) => (o.status === 'fulfilled' ? o.value.close() : undefined)));
    for (const o of opened) if (o.status === 'rejected') throw o.reason;
    assert.deepEqual(await inspect(keyspace), { tables: TABLES + 1, versions: FILES.map((f) => f.version).reverse() });
  });

  test('two chat nodes starting at once on a fresh keyspace both start, on one schema', async () => {
    const keyspace = freshKeyspace();
    // allSettled: when one fails to start, the other is still stopped below.
    const started = await Promise.allSettled([startTestNode(nodeEnv(keyspace), 90_000), startTestNode(nodeEnv(keyspace), 90_000)]);
    const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      for (const node of nodes) assert.equal((await fetch(`${node.origin}/readyz`)).status, 200);
      assert.deepEqual(await inspect(keyspace), { tables: TABLES + 1, versions: FILES.map((f) => f.version).reverse() });
    } finally {
      await Promise.all(nodes.map((node) => node.stop()));
    }
  });

  test('a keyspace of a newer release: the store refuses to open, naming both versions', async () => {
    const keyspace = freshKeyspace();
    await (await createStore(testStoreConfig(cassandraNode(), keyspace))).close();
    await withClient(cassandraNode(), (client) =>
      client.execute(`INSERT INTO ${keyspace}.schema_migrations (scope, version, name, checksum, applied_at) VALUES ('chat', ?, ?, 'x', toTimestamp(now()))`, [KNOWN + 1, `${String(KNOWN + 1).padStart(3, '0')}_from_the_future.cql`], {
        prepare: true,
      }),
    );
    await assert.rejects(CassandraChatStore.open(testStoreConfig(cassandraNode(), keyspace)), (err: unknown) => {
      assert.ok(err instanceof SchemaTooNewError);
      assert.deepEqual([err.found, err.known], [KNOWN + 1, KNOWN]);
      return true;
    });

    // A node process on it: exit status 2 and exactly one line on stderr.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: { ...process.env, CHAT_PORT: '0', CHAT_METRICS_PORT: '0', CHAT_LOG_LEVEL: 'warn', ...nodeEnv(keyspace) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 2, stderr);
    assert.equal(
      stderr,
      `chat node not started: keyspace ${keyspace} has schema version ${KNOWN + 1}, newer than the ${KNOWN} this release knows: run the newer release, or use another keyspace\n`,
    );
  });
});
