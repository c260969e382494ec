/**
 * The bus's live-delivery reports (src/metrics/bus-errors.ts): every channel counted by kind, and
 * one log line per kind and error per window however many channels had it (a fan log gap reaches
 * every fanned channel at once).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { FanGapError, LiveGapError } from '../../src/bus/index.ts';
import { BusErrorReport } from '../../src/metrics/bus-errors.ts';

test('bus errors: counted per channel by kind, logged once per kind and message per window', async () => {
  const registry = new Registry();
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const report = new BusErrorReport(registry, (obj, msg) => lines.push({ obj, msg }), 60_000);
  const gap = new FanGapError(0);
  for (let i = 0; i < 5000; i += 1) report.handle(gap, `user:acme:u${i}`);
  report.handle(new LiveGapError('conversation:acme:c1'), 'conversation:acme:c1');
  report.handle(new TypeError('boom'), 'user:acme:u1');
  report.handle(new TypeError('boom'), 'user:acme:u2');
  assert.equal(lines.length, 0, 'nothing logged before the window ends');
  report.flush();
  assert.equal(lines.length, 3, lines.map((l) => l.msg).join(' | '));
  const fan = lines.find((l) => l.obj.err === gap.message)!;
  assert.deepEqual(fan.obj, { err: gap.message, channels: 5000, channel: 'user:acme:u0' });
  assert.match(fan.msg, /gap/);
  const thrown = lines.find((l) => l.obj.err === 'boom')!;
  assert.equal(thrown.obj.channels, 2);
  assert.equal(thrown.msg, 'bus listener failed');
  const text = await registry.metrics();
  assert.match(text, /chat_bus_listener_errors_total\{kind="gap"\} 5001/);
  assert.match(text, /chat_bus_listener_errors_total\{kind="listener"\} 2/);
  report.flush();
  assert.equal(lines.length, 3, 'a window logs once');
});

test('bus errors: the window flushes on its own', async () => {
  const lines: string[] = [];
  const report = new BusErrorReport(new Registry(), (_obj, msg) => lines.push(msg), 10);
  report.handle(new FanGapError(1), 'user:acme:a');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(lines.length, 1);
});
