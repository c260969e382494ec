/**
 * The floor scenario's two instruments (bench/floor.ts) do what their figures claim: the C fanout
 * floor delivers every frame of every message to every connection and measures each, and the
 * store floor writes durable rows and reports their CPU. Small and short runs: the figures
 * themselves come from `npm run bench -- floor`.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';

const ROOT = path.resolve(import.meta.dirname, '../..');
const hasCc = spawnSync('cc', ['--version'], { stdio: 'ignore' }).status === 0;

test('the fanout floor sends every message to every connection once and measures every event', { skip: !hasCc && 'no C compiler' }, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'floor-test-'));
  try {
    const exe = path.join(dir, 'fanout-floor');
    execFileSync('cc', ['-O2', '-o', exe, path.join(ROOT, 'bench/floor/fanout-floor.c')]);
    // 300 connections, 20 msgs/s, 1 s warm-up (not counted), 1 s measured, 700-byte frames, no pinning.
    const out = execFileSync(exe, ['300', '20', '1', '1', '700', '-1', '-1'], { encoding: 'utf8', timeout: 30_000 });
    const r = JSON.parse(out.trim()) as Record<string, number>;
    assert.equal(r.messages, 20, 'the measured second sends rate x seconds messages');
    assert.equal(r.events, 20 * 300, 'each measured message reached each connection once; warm-up frames are not counted');
    assert.equal(r.lost, 0);
    assert.equal(r.send_failures, 0);
    assert.ok(r.p50_ms! > 0 && r.p50_ms! <= r.p99_ms! && r.p99_ms! <= r.max_ms! + 0.01, `ordered percentiles: ${out}`);
    assert.ok(r.loop_ms_mean! > 0 && r.sender_cpu_us_per_event! > 0);
    const usage = spawnSync(exe, ['1'], { encoding: 'utf8' });
    assert.equal(usage.status, 2, 'wrong arguments: usage, exit 2');
    assert.match(usage.stderr, /usage: fanout-floor/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the store floor commits the rows it reports, in both shapes; the service shape appends through the node\'s store', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'floor-test-'));
  try {
    for (const shape of ['row', 'minimal']) {
      const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/floor-store-proc.ts'), dir, '0.3', '64', shape], { cwd: ROOT, encoding: 'utf8' });
      const r = JSON.parse(out.trim()) as Record<string, number | string>;
      assert.equal(r.shape, shape);
      assert.equal(r.batch, 64);
      assert.ok((r.rows as number) > 0 && (r.rows as number) % 64 === 0, 'whole transactions only');
      assert.ok((r.cpu_us_per_row as number) > 0);
      // The measured rows are in the file (after the unmeasured second's), with their order index intact.
      const db = new Database(path.join(dir, `floor-${shape}.db`), { readonly: true });
      try {
        const count = db.prepare('SELECT count(*) FROM messages').pluck().get() as number;
        assert.ok(count >= (r.rows as number), `${count} rows stored, ${r.rows} reported`);
        assert.equal(db.prepare('PRAGMA integrity_check').pluck().get(), 'ok');
      } finally {
        db.close();
      }
    }
    // The node's own store, for comparison: every append acknowledged as created (it throws otherwise).
    const service = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/floor-store-proc.ts'), dir, '0.3', '16', 'service'], { cwd: ROOT, encoding: 'utf8' }).trim()) as Record<string, number | string>;
    assert.equal(service.shape, 'service');
    assert.ok((service.rows as number) > 0 && (service.rows as number) % 16 === 0 && (service.cpu_us_per_row as number) > 0);
    const usage = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/floor-store-proc.ts'), dir, '1', '64', 'other'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(usage.status, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
