/** The SQLite migration runner: idempotent, transactional, strict about history, race-safe. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { PROJECT_ROOT } from '../../src/config/paths.ts';
import { loadMigrations, migrate, type Migration } from '../../src/store/sqlite/migrations.ts';
import { SqliteChatStore, sqliteStorePath } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-migrations');
const shipped = loadMigrations();

function extra(version: number, sql: string): Migration {
  return { version, name: `${String(version).padStart(3, '0')}_extra.sql`, sql, checksum: `sum-${version}-${sql.length}` };
}

function recorded(file: string): Array<{ version: number; name: string }> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>;
  } finally {
    db.close();
  }
}

describe('SQLite migrations', () => {
  it('the shipped files are numbered without gaps and start at 001_init.sql', () => {
    assert.equal(shipped[0]?.name, '001_init.sql');
    shipped.forEach((m, i) => assert.equal(m.version, i + 1));
  });

  it('apply once, in order, and are a no-op on every later open', async () => {
    const file = sqliteStorePath(dir());
    const first = new SqliteChatStore({ driver: 'sqlite', path: file });
    assert.deepEqual(first.appliedMigrations, shipped.map((m) => m.name));
    await first.close();
    const second = new SqliteChatStore({ driver: 'sqlite', path: file });
    assert.deepEqual(second.appliedMigrations, []);
    await second.close();
    assert.deepEqual(recorded(file).map((r) => r.name), shipped.map((m) => m.name));
  });

  it('a later migration is applied on the next open', async () => {
    const file = sqliteStorePath(dir());
    await new SqliteChatStore({ driver: 'sqlite', path: file }).close();
    const next = [...shipped, extra(shipped.length + 1, 'CREATE TABLE later_feature (id INTEGER PRIMARY KEY) STRICT;')];
    const store = new SqliteChatStore({ driver: 'sqlite', path: file }, { migrations: next });
    assert.deepEqual(store.appliedMigrations, [next[next.length - 1]!.name]);
    await store.close();
  });

  it('a failing migration applies nothing of itself and leaves the file usable', () => {
    const db = new Database(path.join(dir(), 'x.sqlite'));
    try {
      migrate(db, shipped);
      const broken = extra(shipped.length + 1, 'CREATE TABLE half_done (id INTEGER); THIS IS NOT SQL;');
      assert.throws(() => migrate(db, [...shipped, broken]), /syntax/i);
      assert.equal(db.inTransaction, false);
      assert.deepEqual(db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'half_done'").get(), { n: 0 });
      assert.deepEqual(migrate(db, shipped), []);
    } finally {
      db.close();
    }
  });

  it('refuses a database whose applied migration was edited, or that is newer than the build', () => {
    const db = new Database(path.join(dir(), 'x.sqlite'));
    try {
      migrate(db, shipped);
      const edited = shipped.map((m, i) => (i === 0 ? { ...m, checksum: 'edited' } : m));
      assert.throws(() => migrate(db, edited), /edited/);
      migrate(db, [...shipped, extra(shipped.length + 1, 'SELECT 1;')]);
      assert.throws(() => migrate(db, shipped), /newer/);
    } finally {
      db.close();
    }
  });

  it('loadMigrations refuses gaps in the numbering', () => {
    const d = dir();
    fs.writeFileSync(path.join(d, '001_a.sql'), 'SELECT 1;');
    fs.writeFileSync(path.join(d, '003_c.sql'), 'SELECT 1;');
    fs.writeFileSync(path.join(d, 'README.md'), 'not a migration');
    assert.throws(() => loadMigrations(d), /without gaps/);
  });

  it('four processes opening a fresh file at once apply each migration exactly once', async () => {
    const file = sqliteStorePath(dir());
    const run = promisify(execFile);
    const script = path.join(PROJECT_ROOT, 'test/store/fixtures/open-store.ts');
    const outputs = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', script, file], { cwd: PROJECT_ROOT, timeout: 60_000 })),
    );
    const applied = outputs.map((o) => JSON.parse(o.stdout) as string[]);
    assert.equal(applied.filter((a) => a.length > 0).length, 1, `exactly one process migrated: ${JSON.stringify(applied)}`);
    assert.deepEqual(applied.flat(), shipped.map((m) => m.name));
    assert.deepEqual(recorded(file).map((r) => r.name), shipped.map((m) => m.name));
  });
});
