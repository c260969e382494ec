/**
 * The pure parts of `bench cassandra-retention`: the history plan (what the figures are of) and
 * the parsers of what the server prints (nodetool tablestats, a read's trace), on output captured
 * from Cassandra 5.0.6.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTableStats, readFromTrace } from '../../bench/lib/cassandra-figures.ts';
import { DAY_MS, planHistory, type HistoryPlan } from '../../bench/lib/retention-history.ts';

const PLAN: HistoryPlan = {
  tenant_id: 't', application_id: 'a', days: 40, conversations: 100, messagesPerDay: 1000,
  dormantEvery: 10, dormantSinceDays: 31, now: Date.parse('2026-11-26T12:00:00.000Z'), seed: 13,
};

describe('retention bench: history plan', () => {
  const convs = planHistory(PLAN);

  it('spreads about messagesPerDay a day over the days, busiest first', () => {
    const active = convs.filter((c) => !c.dormant);
    const total = convs.reduce((n, c) => n + c.times.length, 0);
    // Dormant conversations stop 31 days early: the tenant's total is below days * messagesPerDay.
    assert.ok(total > 0.8 * PLAN.days * PLAN.messagesPerDay && total < PLAN.days * PLAN.messagesPerDay * 1.05, `${total}`);
    assert.ok(active[0]!.times.length > 10 * active[active.length - 1]!.times.length, 'Zipf: the busiest has far more than the quietest');
  });

  it('keeps every message inside the window, in time order, and dormant ones before the retention cutoff', () => {
    for (const c of convs) {
      assert.ok(c.times.every((t, i) => i === 0 || t >= c.times[i - 1]!), 'seq order is time order');
      assert.ok(c.times[0]! >= PLAN.now - PLAN.days * DAY_MS && c.times[c.times.length - 1]! < PLAN.now);
      if (c.dormant) assert.ok(c.times[c.times.length - 1]! < PLAN.now - PLAN.dormantSinceDays * DAY_MS);
    }
    assert.deepEqual(convs.flatMap((c, i) => (c.dormant ? [i] : [])), [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]);
  });

  it('is the same plan for the same seed (conversation ids aside)', () => {
    assert.deepEqual(planHistory(PLAN).map((c) => c.times), convs.map((c) => c.times));
  });
});

// `nodetool tablestats cap.h` (Cassandra 5.0.6): 100 rows of one partition, 60 deleted, flushed,
// two slices read.
const TABLESTATS = `Total number of tables: 1
----------------
Keyspace: cap
	Read Count: 2
	Read Latency: 6.6315 ms
	Write Count: 160
	Write Latency: 0.14515625 ms
	Pending Flushes: 0
		Table: h
		SSTable count: 1
		Old SSTable count: 0
		Max SSTable size: 6.042KiB
		Space used (live): 6187
		Space used (total): 6187
		Space used by snapshots (total): 0
		Off heap memory used (total): 43
		SSTable Compression Ratio: 0.46943
		Number of partitions (estimate): 1
		Memtable cell count: 0
		Memtable data size: 0
		Memtable off heap memory used: 0
		Memtable switch count: 1
		Speculative retries: 0
		Local read count: 2
		Local read latency: 7.919 ms
		Local write count: 160
		Local write latency: 0.159 ms
		Local read/write ratio: 0.01250
		Pending flushes: 0
		Percent repaired: 0.0
		Bytes repaired: 0B
		Bytes unrepaired: 1.885KiB
		Bytes pending repair: 0B
		Bloom filter false positives: 0
		Bloom filter false ratio: 0.00000
		Bloom filter space used: 16
		Bloom filter off heap memory used: 8
		Index summary off heap memory used: 27
		Compression metadata off heap memory used: 8
		Compacted partition minimum bytes: 1917
		Compacted partition maximum bytes: 2299
		Compacted partition mean bytes: 2299
		Average live cells per slice (last five minutes): 42.0
		Maximum live cells per slice (last five minutes): 42
		Average tombstones per slice (last five minutes): 60.0
		Maximum tombstones per slice (last five minutes): 60
		Droppable tombstone ratio: 0.00000

----------------
`;

// The events of a traced `SELECT ... LIMIT 51` of that partition (system_traces.events), as the
// driver's getTrace answers them (ids, sources, threads and times left out).
const TRACE = {
  duration: 22463,
  events: [
    { activity: 'Executing single-partition query on h' },
    { activity: 'Acquiring sstable references' },
    { activity: 'Skipped 0/1 non-slice-intersecting sstables, included 0 due to tombstones' },
    { activity: 'Partition index found for sstable 1, size = 0' },
    { activity: 'Merged data from memtables and 1 sstables' },
    { activity: 'Read 40 live rows and 60 tombstone cells' },
  ],
};

describe('retention bench: server output', () => {
  it('reads the tablestats figures of one table', () => {
    assert.deepEqual(parseTableStats(TABLESTATS), {
      sstables: 1, spaceLiveBytes: 6187, partitionsEstimate: 1, droppableTombstoneRatio: 0,
      avgTombstonesPerSlice: 60, maxTombstonesPerSlice: 60, avgLiveCellsPerSlice: 42,
    });
  });

  it('refuses output without a figure it needs', () => {
    assert.throws(() => parseTableStats(TABLESTATS.replace(/\t+Droppable tombstone ratio.*\n/, '')), /Droppable tombstone ratio/);
  });

  it('reads live rows, tombstone cells and SSTables from a trace', () => {
    const trace = { ...TRACE, requestType: 'Execute CQL3 prepared query', coordinator: null as never, parameters: {}, startedAt: 0, clientAddress: '127.0.0.1' };
    const events = trace.events.map((e) => ({ ...e, id: null as never, source: null, elapsed: 0, thread: '' }));
    assert.deepEqual(readFromTrace({ ...trace, events }), { liveRows: 40, tombstoneCells: 60, sstables: 1, durationUs: 22463 });
  });
});
