/**
 * Schema application. The keyspace is created by its own statement, with the replication the
 * config gives (default: NetworkTopologyStrategy, 3 replicas in the local data center), before
 * any table; then every schema/cassandra/NNN_*.cql file is applied in order. Every statement is
 * IF NOT EXISTS, so nodes starting together may all apply it: Cassandra serializes schema
 * changes and the driver waits for schema agreement after each DDL statement before the next.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cassandra from 'cassandra-driver';
import type { CassandraStoreConfig } from '../types.ts';
import type { CqlClient } from './cql.ts';
import { splitStatements } from './schema-model.ts';

export type Replication = NonNullable<CassandraStoreConfig['replication']>;

const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../schema/cassandra');
const IDENT = /^[A-Za-z][A-Za-z0-9_]{0,47}$/;

export function schemaFiles(dir: string = SCHEMA_DIR): Array<{ name: string; statements: string[] }> {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.cql$/.test(f))
    .sort()
    .map((name) => ({ name, statements: splitStatements(fs.readFileSync(path.join(dir, name), 'utf8')) }));
}

export function checkIdentifier(name: string, what: string): string {
  if (!IDENT.test(name)) throw new RangeError(`${what} must be a CQL identifier (letters, digits, _; got ${JSON.stringify(name)})`);
  return name;
}

/** CREATE KEYSPACE with the replication map rendered as a CQL literal (keys and values checked). */
export function keyspaceCql(keyspace: string, replication: Replication): string {
  checkIdentifier(keyspace, 'keyspace');
  const entries = Object.entries(replication).map(([k, v]) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(k) || !/^[A-Za-z0-9_.-]+$/.test(String(v))) throw new RangeError(`bad replication entry ${k}: ${String(v)}`);
    return `'${k}': '${String(v)}'`;
  });
  return `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {${entries.join(', ')}} AND durable_writes = true`;
}

const DDL = { prepare: false, consistency: cassandra.types.consistencies.localQuorum, isIdempotent: true };

export async function createKeyspace(client: CqlClient, keyspace: string, replication: Replication): Promise<void> {
  await client.execute(keyspaceCql(keyspace, replication), [], DDL);
}

/** Applies every table statement; answers how many ran. */
export async function applySchema(client: CqlClient, dir?: string): Promise<number> {
  let n = 0;
  for (const file of schemaFiles(dir)) {
    for (const stmt of file.statements) {
      await client.execute(stmt, [], DDL);
      n += 1;
    }
  }
  return n;
}
