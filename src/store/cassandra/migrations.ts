/**
 * Schema life cycle. The keyspace is created by its own statement, with the replication the
 * config gives (default: NetworkTopologyStrategy, 3 replicas in the local data center), before
 * any table; then the `schema/cassandra/NNN_*.cql` files not applied yet run in order, and each
 * applied version is recorded in `schema_migrations` (one row per version, newest first).
 *
 * - At start, one read answers the keyspace's version. Equal to the newest file: nothing to do
 *   (no DDL, so a restart or a new node costs no schema change). Newer than any file this
 *   release has: SchemaTooNewError, the node refuses to start (its code was not written for
 *   that schema). Older or absent (a fresh keyspace, or one made before versions were
 *   recorded): apply the missing files, then record their versions.
 * - Nodes starting together on a fresh keyspace may all apply the same files: every statement
 *   is IF NOT EXISTS, and a version row written twice is the same row. All DDL goes to one
 *   coordinator, the same for every node (the lowest address that is up): Cassandra before 5.1
 *   serializes schema changes per coordinator, but two coordinators creating one table at once
 *   may give it two ids, which the ring then has to reconcile. The driver waits for schema
 *   agreement after each change.
 * - A version row is written after its file applied: a node that dies half-way leaves the
 *   version unrecorded, and the next start applies the file again (idempotent).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import cassandra from 'cassandra-driver';
import { PROJECT_ROOT } from '../../config/paths.ts';
import type { CassandraStoreConfig } from '../types.ts';
import type { CqlClient } from './cql.ts';
import { SchemaTooNewError } from '../errors.ts';
import { parseTable, splitStatements } from './schema-model.ts';

export type Replication = NonNullable<CassandraStoreConfig['replication']>;

// From the project root, not from this file: in the bundle `npm start` runs (dist/main.mjs) this
// module has no directory of its own, and ../../../ of dist/ is outside the project.
const SCHEMA_DIR = path.join(PROJECT_ROOT, 'schema', 'cassandra');
const IDENT = /^[A-Za-z][A-Za-z0-9_]{0,47}$/;

export interface SchemaFile {
  version: number;
  name: string;
  statements: string[];
  checksum: string;
}

export function schemaFiles(dir: string = SCHEMA_DIR): SchemaFile[] {
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.cql$/.test(f))
    .sort()
    .map((name) => {
      const text = fs.readFileSync(path.join(dir, name), 'utf8');
      return { version: Number(name.slice(0, 3)), name, statements: splitStatements(text), checksum: createHash('sha256').update(text).digest('hex') };
    });
  files.forEach((f, i) => {
    if (f.version !== i + 1) throw new Error(`${dir}: schema files must be numbered 001, 002, ... without gaps (found ${f.name})`);
  });
  return files;
}

export function checkIdentifier(name: string, what: string): string {
  if (!IDENT.test(name)) throw new RangeError(`${what} must be a CQL identifier (letters, digits, _; got ${JSON.stringify(name)})`);
  return name;
}

/**
 * CREATE KEYSPACE with the replication map rendered as a CQL literal (keys and values checked).
 * `tablets: false` adds ScyllaDB's `tablets = {'enabled': false}`: from ScyllaDB 6.0 new
 * keyspaces use tablets by default, and a keyspace with tablets refuses lightweight
 * transactions, which this store needs (Apache Cassandra knows no such option).
 */
export function keyspaceCql(keyspace: string, replication: Replication, options: { tablets?: false } = {}): string {
  checkIdentifier(keyspace, 'keyspace');
  const entries = Object.entries(replication).map(([k, v]) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(k) || !/^[A-Za-z0-9_.-]+$/.test(String(v))) throw new RangeError(`bad replication entry ${k}: ${String(v)}`);
    return `'${k}': '${String(v)}'`;
  });
  const tablets = options.tablets === false ? " AND tablets = {'enabled': false}" : '';
  return `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {${entries.join(', ')}} AND durable_writes = true${tablets}`;
}

const DDL = { prepare: false, consistency: cassandra.types.consistencies.localQuorum, isIdempotent: true };
const READ = { prepare: false, consistency: cassandra.types.consistencies.localQuorum, isIdempotent: true };

/** The one coordinator every node sends schema changes to: the lowest address that is up. */
function ddlHost(client: cassandra.Client): cassandra.Host | undefined {
  const up = client.hosts.values().filter((h) => h.isUp());
  return up.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))[0];
}

function ddl(client: cassandra.Client, statement: string): Promise<unknown> {
  return duringSchemaRace(() => {
    const host = ddlHost(client);
    return client.execute(statement, [], host === undefined ? DDL : { host, ...DDL });
  });
}

/**
 * Stores opening a fresh keyspace at once apply the same files side by side (every statement IF
 * NOT EXISTS): one may reach a table another has just created before the node finished setting it
 * up, and the server answers `Unknown CF <id>` (seen in CI with four stores, once the schema had
 * an ALTER of a table the first file creates). The statement is tried again shortly; the race is
 * over within milliseconds.
 */
async function duringSchemaRace<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= 50 || !/Unknown CF/.test((error as Error).message)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** ScyllaDB has `system.scylla_local`; Apache Cassandra does not. */
async function isScylla(client: CqlClient): Promise<boolean> {
  const rs = await client.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'system' AND table_name = 'scylla_local'", [], READ);
  return rs.rows.length > 0;
}

export async function createKeyspace(client: cassandra.Client, keyspace: string, replication: Replication): Promise<void> {
  // Present already (the driver read the schema at connect): no schema change at all.
  if (client.metadata.keyspaces[keyspace] !== undefined) return;
  if (await isScylla(client)) {
    try {
      await ddl(client, keyspaceCql(keyspace, replication, { tablets: false }));
      return;
    } catch (error) {
      // A ScyllaDB before tablets (5.x) knows no such option: vnodes are all it has anyway.
      if (!/tablets/i.test((error as Error).message)) throw error;
    }
  }
  await ddl(client, keyspaceCql(keyspace, replication));
}

export const MIGRATIONS_TABLE_CQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  scope text, version int, name text, checksum text, applied_at timestamp,
  PRIMARY KEY (scope, version)) WITH CLUSTERING ORDER BY (version DESC)`;
/** One keyspace, one schema; the partition key leaves room for another schema beside it. */
const SCOPE = 'chat';

/** The keyspace's recorded version; null when nothing is recorded (no table, or no row). */
export async function schemaVersion(client: CqlClient): Promise<number | null> {
  try {
    // Retried through `Unknown CF`: another node may have created the table a moment ago.
    const rs = await duringSchemaRace(() => client.execute('SELECT version FROM schema_migrations WHERE scope = ? LIMIT 1', [SCOPE], READ));
    const v = rs.rows[0]?.version;
    return typeof v === 'number' ? v : null;
  } catch (error) {
    // 0x2200 Invalid: "unconfigured table schema_migrations" (a keyspace from before versions).
    if ((error as { code?: unknown }).code === 0x2200) return null;
    throw error;
  }
}

/**
 * Brings the keyspace (the client's) to the newest schema file; answers the files applied now.
 * Throws SchemaTooNewError, naming both versions, on a keyspace of a newer release.
 */
export async function applySchema(client: cassandra.Client, keyspace: string, dir?: string): Promise<string[]> {
  const files = schemaFiles(dir);
  const known = files.length;
  const current = await schemaVersion(client);
  if (current !== null && current > known) throw new SchemaTooNewError(`keyspace ${keyspace}`, current, known);
  if (current === known) {
    // Up to date, but possibly only just: another node may have recorded the last version before
    // the server finished opening the tables of that file.
    await tablesUsable(client, files);
    return [];
  }
  await ddl(client, MIGRATIONS_TABLE_CQL);
  const applied: string[] = [];
  for (const file of files) {
    if (current !== null && file.version <= current) continue;
    for (const stmt of file.statements) await ddl(client, stmt);
    await duringSchemaRace(() =>
      client.execute(
        'INSERT INTO schema_migrations (scope, version, name, checksum, applied_at) VALUES (?, ?, ?, ?, ?)',
        [SCOPE, file.version, file.name, file.checksum, new Date()],
        { prepare: true, consistency: cassandra.types.consistencies.localQuorum, isIdempotent: true },
      ),
    );
    applied.push(file.name);
  }
  await tablesUsable(client, files);
  return applied;
}

/**
 * A table another process created a moment ago can be in the schema (so this process's IF NOT
 * EXISTS found it) before the server finished opening it: the first statement the node then runs
 * on it answers `Unknown CF` (CI saw a node die at start on that). After any schema work, one
 * read of every table, retried through that window, so the store is only handed over once every
 * table answers. Also on a keyspace found up to date: its last version may have been recorded by
 * another node a moment ago (CI saw the version read itself, then the first read of a table, meet
 * `Unknown CF` on a machine under load). One read per table at start costs a few ms.
 */
async function tablesUsable(client: cassandra.Client, files: SchemaFile[]): Promise<void> {
  const tables = ['schema_migrations', ...files.flatMap((f) => f.statements.filter((s) => /^CREATE TABLE/i.test(s)).map((s) => parseTable(s).name))];
  for (const table of tables) await duringSchemaRace(() => client.execute(`SELECT * FROM ${checkIdentifier(table, 'table')} LIMIT 1`, [], READ));
}
