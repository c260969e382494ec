/**
 * Migration runner: applies `schema/sqlite/NNN_name.sql` in version order, each recorded in
 * `schema_migrations` with a checksum of its text.
 *
 * - Idempotent: at every open, only versions not yet recorded are applied.
 * - Safe when several processes open one file at once (shared-file mode): the check and the
 *   apply happen in one exclusive transaction, so the second process waits for the first and
 *   then finds everything recorded. DDL is transactional in SQLite, so a crash mid-migration
 *   leaves the previous version intact.
 * - Refuses to start (throws) when an applied file was edited (checksum differs) or when the
 *   database has versions this build does not know (it was written by a newer build): running
 *   on a schema the code was not written for corrupts data quietly, refusing is loud.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { PROJECT_ROOT } from '../../config/paths.ts';

export const SQLITE_SCHEMA_DIR = path.join(PROJECT_ROOT, 'schema', 'sqlite');

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

const FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export function loadMigrations(dir: string = SQLITE_SCHEMA_DIR): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .map((file) => ({ file, m: FILE.exec(file) }))
    .filter((entry): entry is { file: string; m: RegExpExecArray } => entry.m !== null)
    .map(({ file, m }) => {
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      return { version: Number(m[1]), name: file, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${dir}: migrations must be numbered 001, 002, ... without gaps (found ${m.name})`);
  });
  if (migrations.length === 0) throw new Error(`${dir}: no migrations found`);
  return migrations;
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

/** Applies what is missing; answers the names applied now (empty when up to date). */
export function migrate(db: Database.Database, migrations: readonly Migration[], at: string = new Date().toISOString()): string[] {
  const applied: string[] = [];
  db.prepare('BEGIN EXCLUSIVE').run();
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER NOT NULL PRIMARY KEY,
      name       TEXT NOT NULL,
      checksum   TEXT NOT NULL,
      applied_at TEXT NOT NULL
    ) STRICT`);
    const rows = db.prepare<[], AppliedRow>('SELECT version, name, checksum FROM schema_migrations ORDER BY version').all();
    const known = new Map(migrations.map((m) => [m.version, m]));
    for (const row of rows) {
      const m = known.get(row.version);
      if (!m) throw new Error(`database schema version ${row.version} (${row.name}) is newer than this build knows; refusing to open`);
      if (m.checksum !== row.checksum) throw new Error(`migration ${m.name} was edited after it was applied (checksum differs); add a new migration instead`);
    }
    const done = new Set(rows.map((r) => r.version));
    const record = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, m.checksum, at);
      applied.push(m.name);
    }
    db.prepare('COMMIT').run();
  } catch (error) {
    if (db.inTransaction) db.prepare('ROLLBACK').run();
    throw error;
  }
  return applied;
}
