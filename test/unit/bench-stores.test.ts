import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeResults, parseStores, underStore } from '../../bench/lib/stores.ts';
import type { ScenarioResult } from '../../bench/lib/scenario.ts';

test('the store flag: SQLite by default, a list in the order given, one with --store, anything else refused', () => {
  assert.deepEqual(parseStores('messages', []), ['sqlite']);
  assert.deepEqual(parseStores('messages', ['--stores', 'sqlite,cassandra']), ['sqlite', 'cassandra']);
  assert.deepEqual(parseStores('messages', ['--store', 'cassandra']), ['cassandra']);
  assert.throws(() => parseStores('messages', ['--stores']), /takes a comma-separated list/);
  assert.throws(() => parseStores('messages', ['--stores', 'sqlite,scylla']), /got sqlite,scylla/);
  assert.throws(() => parseStores('messages', ['--stores', 'sqlite,sqlite']), /comma-separated/);
  assert.throws(() => parseStores('messages', ['--store', 'sqlite,cassandra']), /takes one of/);
  assert.throws(() => parseStores('messages', ['--cluster', '3']), /unknown flag --cluster/);
});

const result = (): ScenarioResult => ({
  measurements: [{ target: 'send', round: 1, wrk: {} as ScenarioResult['measurements'][number]['wrk'] }],
  figures: { send_rps: 10 },
  goals: [{ figure: 'send_rps', op: '>=', threshold: 1, value: 10, pass: true }],
  notes: ['n'],
});

test('figures keep their historical names for SQLite alone, and carry their store otherwise', () => {
  assert.deepEqual(underStore('sqlite', ['sqlite'], result()).figures, { send_rps: 10 });
  const both = mergeResults([underStore('sqlite', ['sqlite', 'cassandra'], result()), underStore('cassandra', ['sqlite', 'cassandra'], result())]);
  assert.deepEqual(both.figures, { sqlite_send_rps: 10, cassandra_send_rps: 10 });
  assert.deepEqual(both.measurements.map((m) => m.target), ['sqlite: send', 'cassandra: send']);
  assert.deepEqual(both.goals.map((g) => g.figure), ['sqlite_send_rps', 'cassandra_send_rps']);
  assert.deepEqual(underStore('cassandra', ['cassandra'], result()).figures, { cassandra_send_rps: 10 });
});
