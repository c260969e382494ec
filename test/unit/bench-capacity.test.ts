import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capacityNotes, EXAMPLES, perCore, size, type UnitCosts } from '../../bench/lib/cluster-capacity.ts';

// The constants docs/capacity.md uses for a Cassandra-backed cluster (runs of 2026-11-26 16:36-16:46).
const onCassandra: UnitCosts = { sendLocalUs: 1182, forwardUs: 256, pageUs: 490, eventUs: 10.9, redisSendUs: 299, sendCoLocatedUs: 2514, cassandraSendUs: 2416, cassandraPageUs: 286 };

test("the Cassandra sizing is the arithmetic docs/capacity.md shows for tenants A and B", () => {
  const [a, b] = EXAMPLES.map((t) => size(t, onCassandra));
  assert.equal(a!.nodes, 7);
  assert.equal(Number(a!.cores.toFixed(2)), 3.08);
  assert.equal(Number(a!.cassandraCoresRf1!.toFixed(2)), 4.89);
  assert.equal(Number(a!.redisShare.toFixed(2)), 0.6);
  assert.equal(b!.nodes, 53);
  assert.equal(Number(b!.cassandraCoresRf1!.toFixed(2)), 48.89);
  assert.deepEqual(perCore(onCassandra), { sendsLocal: 846, sendsForwarded: 695, pages: 2041, events: 91743, redisSends: 3344, cassandraSends: 414 });
});

test('without Cassandra costs the sizing and its notes say nothing of Cassandra', () => {
  const { cassandraSendUs: _s, cassandraPageUs: _p, ...sqlite } = onCassandra;
  assert.equal(size(EXAMPLES[0]!, sqlite).cassandraCoresRf1, undefined);
  assert.equal(perCore(sqlite).cassandraSends, 0);
  assert.ok(capacityNotes(sqlite).every((n) => !n.includes('Cassandra')));
  assert.ok(capacityNotes(onCassandra).some((n) => n.includes('414 sends/s per Cassandra core at RF 1')));
});
