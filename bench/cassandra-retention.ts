/**
 * The `cassandra-retention` scenario: what message retention costs on a real Cassandra server, and
 * whether reads of recent history stay off what it deleted.
 *
 * A tenant's history of --days days (backdated appends through CassandraChatStore, as an actor
 * writes them; traffic model in lib/retention-history.ts) with a retention of --retention-days,
 * then the retention pass as src/retention/ runs it (runRetentionOnce -> messages.deleteExpired),
 * then two major compactions: one with the schema's gc_grace_seconds (the tombstones must stay:
 * they are younger than it) and one with gc_grace_seconds = 0 on the tables retention deletes
 * from (what compaction does once gc_grace has passed, which a bench cannot wait for: a
 * tombstone's local deletion time is the server's clock at the delete).
 *
 * Measured:
 *  - the retention pass: time, statements by kind, CPU of this process and of the JVM (net of its
 *    idle burn), the messages it deleted (checked against the plan), the tombstones it wrote
 *    (counted from what it deletes, per table), and what the server's histograms saw its reads
 *    scan (nodetool tablestats, tombstones per slice over the last five minutes);
 *  - after a flush and after each compaction: SSTable count, live space, droppable tombstone
 *    ratio (tablestats); each compaction's time and JVM CPU;
 *  - reads of recent history, the newest page (limit 50, the store's own `list`), before the
 *    pass, right after it, after each compaction: p50/p99 over the active conversations, and on a
 *    traced sample per conversation class (busiest, quietest active, the longest dormant one =
 *    all of its history expired) the replica's "Read N live rows and M tombstone cells" summed
 *    over the page's slices, and the slices (one per seq bucket it walked).
 *
 * Needs a Cassandra node of its own (nodetool over local JMX): BENCH_CASSANDRA_CONTACT_POINTS is
 * refused. Hold the machine lock: `flock /tmp/machine.lock npm run bench -- cassandra-retention`.
 */
import os from 'node:os';
import cassandra from 'cassandra-driver';
import { runRetentionOnce } from '../src/retention/retention-job.ts';
import { createLogger } from '../src/log/index.ts';
import { CassandraChatStore } from '../src/store/cassandra/cassandra-store.ts';
import type { StatementCounts } from '../src/store/cassandra/cql.ts';
import type { ConversationRef } from '../src/store/index.ts';
import { benchCassandra, dropKeyspace, jvmCpuSeconds, type BenchCassandra } from './lib/cassandra.ts';
import { readTrace, tableOptions, tableStats, TracingClient, type ReadTrace, type TableOptions, type TableStats } from './lib/cassandra-figures.ts';
import { BenchError } from './lib/errors.ts';
import { createConversations, DAY_MS, planHistory, writeHistory, type HistoryPlan, type PlannedConversation } from './lib/retention-history.ts';
import type { Scenario } from './lib/scenario.ts';

const USAGE = '[--days 40] [--retention-days 30] [--conversations 100] [--messages-per-day 1000 (tenant-wide)] [--dormant-every 10 (0: none)] [--reads 300 (per phase)] [--traces 3 (per class and phase)] [--writers 32]';
const PAGE = 50;
/** The tables retention deletes from: their gc_grace is lowered for the purging compaction. */
const RETENTION_TABLES = ['messages_by_conversation', 'message_by_id', 'messages_by_tenant_day', 'message_days_by_tenant', 'reactions'] as const;
const HISTORY = 'messages_by_conversation';
const WORK_LIST = 'messages_by_tenant_day';
const IDLE_SECONDS = 5;
const DROP_TIME_ROUNDING_MS = 65_000;
/** A reader with no marker in any conversation. */
const NEVER_READ = 'never-read';

interface Options {
  days: number;
  retentionDays: number;
  conversations: number;
  messagesPerDay: number;
  dormantEvery: number;
  reads: number;
  traces: number;
  writers: number;
}

function parseOptions(args: string[]): Options {
  const o: Options = { days: 40, retentionDays: 30, conversations: 100, messagesPerDay: 1000, dormantEvery: 10, reads: 300, traces: 3, writers: 32 };
  const int = (flag: string, v: string | undefined, min: number, max: number): number => {
    if (v === undefined || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new BenchError(`cassandra-retention: ${flag} takes an integer from ${min} to ${max} (got ${v ?? 'nothing'})\nflags: ${USAGE}`);
    return Number(v);
  };
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i]!;
    const v = args[i + 1];
    switch (flag) {
      case '--days': o.days = int(flag, v, 2, 3650); break;
      case '--retention-days': o.retentionDays = int(flag, v, 1, 3650); break;
      case '--conversations': o.conversations = int(flag, v, 1, 100_000); break;
      case '--messages-per-day': o.messagesPerDay = int(flag, v, 1, 10_000_000); break;
      case '--dormant-every': o.dormantEvery = int(flag, v, 0, 100_000); break;
      case '--reads': o.reads = int(flag, v, 1, 100_000); break;
      case '--traces': o.traces = int(flag, v, 0, 100); break;
      case '--writers': o.writers = int(flag, v, 1, 1024); break;
      default: throw new BenchError(`cassandra-retention: unknown flag ${flag}\nflags: ${USAGE}`);
    }
  }
  if (o.retentionDays >= o.days) throw new BenchError(`cassandra-retention: --retention-days (${o.retentionDays}) must be below --days (${o.days}), or nothing expires`);
  return o;
}

const round = (n: number, digits = 2): number => Number(n.toFixed(digits));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** What one bench run works with. */
interface Bench {
  cassandra: BenchCassandra;
  nodetool: (args: string[]) => Promise<string>;
  keyspace: string;
  store: CassandraChatStore;
  tracer: TracingClient;
  /** Cores the JVM burns with nothing to do (gossip, GC, compaction checks). */
  idle: number;
  log: (line: string) => void;
}

/** A traced read: a class of conversation and the store call that reads it. */
interface Sample {
  name: string;
  read: (store: CassandraChatStore) => Promise<unknown>;
}

interface ReadPhase {
  p50_ms: number;
  p99_ms: number;
  /** Per class: the traced pages' averages. */
  traced: Record<string, { live: number; tombstones: number; sstables: number; slices: number }>;
}

/** Cores the JVMs use with no load from us. */
async function idleCores(pids: number[], seconds: number): Promise<number> {
  const jvm0 = jvmCpuSeconds(pids);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  return (jvmCpuSeconds(pids) - jvm0) / ((performance.now() - t0) / 1000);
}

async function newestPage(store: CassandraChatStore, ref: ConversationRef): Promise<number> {
  const page = await store.messages.list({ ...ref, viewer_user_id: null, limit: PAGE });
  if (!page) throw new BenchError(`conversation ${ref.conversation_id} is gone`);
  return page.items.length;
}

/** One traced read: the replica's figures summed over the history slices it ran. */
async function tracedRead(b: Bench, sample: Sample): Promise<ReadTrace & { slices: number }> {
  const stop = b.tracer.start();
  await sample.read(b.store);
  const slices = stop().filter((s) => s.query.includes(`FROM ${HISTORY} `));
  const sum = { liveRows: 0, tombstoneCells: 0, sstables: 0, durationUs: 0, slices: slices.length };
  for (const s of slices) {
    const t = await readTrace(b.tracer.client, s.traceId);
    sum.liveRows += t.liveRows;
    sum.tombstoneCells += t.tombstoneCells;
    sum.sstables += t.sstables;
    sum.durationUs += t.durationUs;
  }
  return sum;
}

/**
 * Newest pages of the active conversations, timed one at a time (after one untimed page of each:
 * the first phase would otherwise also measure JIT warm-up and cold caches); then the traced samples.
 */
async function readPhase(b: Bench, active: ConversationRef[], samples: Sample[], o: Options): Promise<ReadPhase> {
  for (const ref of active) await newestPage(b.store, ref);
  const latencies: number[] = [];
  for (let i = 0; i < o.reads; i += 1) {
    const t0 = performance.now();
    await newestPage(b.store, active[i % active.length]!);
    latencies.push(performance.now() - t0);
  }
  latencies.sort((x, y) => x - y);
  const traced: ReadPhase['traced'] = {};
  for (const s of samples) {
    if (o.traces === 0) continue;
    const acc = { live: 0, tombstones: 0, sstables: 0, slices: 0 };
    for (let i = 0; i < o.traces; i += 1) {
      const t = await tracedRead(b, s);
      acc.live += t.liveRows;
      acc.tombstones += t.tombstoneCells;
      acc.sstables += t.sstables;
      acc.slices += t.slices;
    }
    traced[s.name] = { live: round(acc.live / o.traces, 1), tombstones: round(acc.tombstones / o.traces, 1), sstables: round(acc.sstables / o.traces, 1), slices: round(acc.slices / o.traces, 1) };
  }
  return { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), traced };
}

interface Cost {
  seconds: number;
  cassandra_cpu_s: number;
  cassandra_net_cpu_s: number;
}

/** Wall time and JVM CPU of `work` (net of the JVM's idle burn over the same time). */
async function costOf<T>(b: Bench, work: () => Promise<T>): Promise<{ result: T; cost: Cost }> {
  const jvm0 = jvmCpuSeconds(b.cassandra.pids);
  const t0 = performance.now();
  const result = await work();
  const seconds = (performance.now() - t0) / 1000;
  const jvm = jvmCpuSeconds(b.cassandra.pids) - jvm0;
  return { result, cost: { seconds: round(seconds), cassandra_cpu_s: round(jvm), cassandra_net_cpu_s: round(Math.max(0, jvm - b.idle * seconds)) } };
}

/** Every message the plan puts before the cutoff, and the days wholly before the cutoff's day. */
function expected(convs: PlannedConversation[], cutoff: number): { messages: number; days: number } {
  const times = convs.flatMap((c) => c.times.filter((t) => t < cutoff));
  const cutoffDay = Math.floor(cutoff / DAY_MS);
  return { messages: times.length, days: new Set(times.map((t) => Math.floor(t / DAY_MS)).filter((d) => d < cutoffDay)).size };
}

/**
 * Tombstones one retention pass writes, from what it deletes: per message a row tombstone in the
 * history and in the day's work list, a partition tombstone for its id lookup and for its
 * reactions partition (written whether it had reactions or not); per emptied day a row tombstone
 * in the tenant's list of days.
 */
function tombstonesWritten(messages: number, days: number): Record<string, number> {
  return { [HISTORY]: messages, message_by_id: messages, [WORK_LIST]: messages, reactions: messages, message_days_by_tenant: days };
}

async function stats(b: Bench, table: string): Promise<TableStats> {
  return tableStats(b.nodetool, b.keyspace, table);
}

function statsFigures(prefix: string, s: TableStats): Record<string, number> {
  return {
    [`${prefix}_sstables`]: s.sstables,
    [`${prefix}_space_kb`]: Math.round(s.spaceLiveBytes / 1024),
    [`${prefix}_droppable_tombstone_ratio`]: round(s.droppableTombstoneRatio, 4),
  };
}

function readFigures(prefix: string, r: ReadPhase): Record<string, number> {
  const out: Record<string, number> = { [`${prefix}_p50_ms`]: round(r.p50_ms), [`${prefix}_p99_ms`]: round(r.p99_ms) };
  for (const [cls, t] of Object.entries(r.traced)) {
    out[`${prefix}_${cls}_live_rows`] = t.live;
    out[`${prefix}_${cls}_tombstone_cells`] = t.tombstones;
    out[`${prefix}_${cls}_sstables`] = t.sstables;
    out[`${prefix}_${cls}_slices`] = t.slices;
  }
  return out;
}

function costFigures(prefix: string, c: Cost): Record<string, number> {
  return { [`${prefix}_s`]: c.seconds, [`${prefix}_cassandra_cpu_s`]: c.cassandra_cpu_s, [`${prefix}_cassandra_net_cpu_s`]: c.cassandra_net_cpu_s };
}

/** The retention pass as the job runs it, measured. */
async function retentionPass(b: Bench, at: number): Promise<{ deleted: number; cost: Cost; statements: StatementCounts; node_cpu_s: number }> {
  const counts0 = b.store.statementCounts();
  const cpu0 = process.cpuUsage();
  const { result, cost } = await costOf(b, () => runRetentionOnce(b.store, createLogger('silent'), { at: new Date(at).toISOString() }));
  const cpu = process.cpuUsage(cpu0);
  const counts = b.store.statementCounts();
  if (result.failed > 0) throw new BenchError('the retention pass failed for the tenant');
  return {
    deleted: result.deleted,
    cost,
    statements: { plain: counts.plain - counts0.plain, lwt: counts.lwt - counts0.lwt, batches: counts.batches - counts0.batches, unlogged: counts.unlogged - counts0.unlogged },
    node_cpu_s: round((cpu.user + cpu.system) / 1e6),
  };
}

async function compact(b: Bench): Promise<Cost> {
  return (await costOf(b, () => b.nodetool(['compact', b.keyspace]))).cost;
}

async function setGcGrace(b: Bench, seconds: number): Promise<void> {
  for (const table of RETENTION_TABLES) await b.tracer.client.execute(`ALTER TABLE ${b.keyspace}.${table} WITH gc_grace_seconds = ${seconds}`);
}

/**
 * The traced reads: the newest page of the busiest conversation, of the quietest active one, and
 * of the dormant one with the longest history (all of it expired: the worst newest page there
 * is); and the busiest conversation's unread count for a reader who never read it (marker 0, the
 * same scan as any marker older than the cutoff: up from the marker through what expired).
 */
function samplesOf(convs: PlannedConversation[], ref: (c: PlannedConversation) => ConversationRef): { active: ConversationRef[]; samples: Sample[] } {
  const bySize = [...convs].sort((x, y) => y.times.length - x.times.length);
  const active = bySize.filter((c) => !c.dormant);
  const page = (name: string, c: PlannedConversation | undefined): Sample[] => (c ? [{ name, read: (store) => newestPage(store, ref(c)) }] : []);
  const busiest = active[0];
  return {
    active: active.map(ref),
    samples: [
      ...page('busiest', busiest),
      ...page('quietest', active[active.length - 1]),
      ...page('dormant', bySize.find((c) => c.dormant)),
      ...(busiest ? [{ name: 'unread_from_0', read: (store: CassandraChatStore) => store.readState.get(ref(busiest), NEVER_READ) }] : []),
    ],
  };
}

export const scenario: Scenario = {
  name: 'cassandra-retention',
  description: 'a tenant with N days of history and a shorter retention on a real Cassandra: the retention pass (time, statements, CPU, tombstones), compaction before and after gc_grace, and newest-page reads before/after (p50/p99, traced live rows and tombstone cells)',
  usage: USAGE,
  async run(_settings, log, args) {
    const o = parseOptions(args);
    const cassandraServer = await benchCassandra(log);
    const keyspace = `bench_retention_${process.pid}`;
    const nodetool = cassandraServer.nodetool;
    let tracer: TracingClient | null = null;
    let store: CassandraChatStore | null = null;
    try {
      if (!nodetool) throw new BenchError('cassandra-retention needs a node of its own (nodetool over its local JMX port): unset BENCH_CASSANDRA_CONTACT_POINTS');
      store = await CassandraChatStore.open(
        { driver: 'cassandra', contactPoints: cassandraServer.contactPoints, localDataCenter: cassandraServer.localDataCenter, keyspace, replicationFactor: 1 },
        {
          wrapClient: (client) => {
            if (!(client instanceof cassandra.Client)) throw new Error('expected the driver client');
            return (tracer = new TracingClient(client));
          },
        },
      );
      const b: Bench = { cassandra: cassandraServer, nodetool, keyspace, store, tracer: tracer!, idle: 0, log };
      const figures = await measureAll(b, o);
      return {
        measurements: [],
        figures,
        goals: [],
        notes: [
          `Cassandra JVM ${cassandraServer.pids.join(',')} at ${cassandraServer.contactPoints.join(',')}; keyspace ${keyspace}, RF 1 (dropped after the run)`,
          `load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
        ],
      };
    } finally {
      await store?.close();
      await dropKeyspace(cassandraServer, keyspace).catch((e: unknown) => log(`could not drop ${keyspace}: ${String(e)}`));
      await cassandraServer.stop();
    }
  },
};

type Figures = Record<string, number>;
/** One read phase's figures under a prefix. */
type Reads = (prefix: string) => Promise<Figures>;

/** Creates the conversations, appends the planned history, sets the tenant's retention, flushes. */
async function writePhase(b: Bench, o: Options, plan: HistoryPlan, convs: PlannedConversation[]): Promise<Figures> {
  const records = await createConversations(b.store, plan, convs);
  const written = await costOf(b, () => writeHistory(b.store, convs, records, o.writers, (done, total) => b.log(`written ${done} of ${total} messages`)));
  b.log(`history: ${written.result} messages in ${o.conversations} conversations over ${o.days} days, written in ${written.cost.seconds} s`);
  await b.store.settings.update(plan.tenant_id, { message_retention_days: o.retentionDays });
  await b.nodetool(['flush', b.keyspace]);
  return { messages_written: written.result, write_s: written.cost.seconds, write_per_s: Math.round(written.result / written.cost.seconds), ...statsFigures('history_written', await stats(b, HISTORY)) };
}

/** The pass, checked against the plan, and what the server saw of it after a flush. */
async function retentionPhase(b: Bench, o: Options, plan: HistoryPlan, convs: PlannedConversation[]): Promise<Figures> {
  const want = expected(convs, plan.now - o.retentionDays * DAY_MS);
  b.log(`retention pass: ${want.messages} messages older than ${o.retentionDays} days to delete`);
  const pass = await retentionPass(b, plan.now);
  if (pass.deleted !== want.messages) throw new BenchError(`the retention pass deleted ${pass.deleted} messages, the plan has ${want.messages} older than the cutoff`);
  const figures: Figures = {
    ...costFigures('retention', pass.cost),
    retention_deleted: pass.deleted,
    retention_per_s: Math.round(pass.deleted / pass.cost.seconds),
    retention_node_cpu_s: pass.node_cpu_s,
    retention_cassandra_net_cpu_us_per_message: Math.round((pass.cost.cassandra_net_cpu_s * 1e6) / pass.deleted),
    retention_plain_statements: pass.statements.plain,
    retention_batches: pass.statements.batches,
    retention_lwt: pass.statements.lwt,
  };
  for (const [table, n] of Object.entries(tombstonesWritten(want.messages, want.days))) figures[`tombstones_written_${table}`] = n;
  await b.nodetool(['flush', b.keyspace]);
  // The pass's own reads of its work list, as the server's histogram saw them (last five minutes).
  const workList = await stats(b, WORK_LIST);
  figures.retention_worklist_max_tombstones_per_slice = workList.maxTombstonesPerSlice;
  figures.retention_worklist_avg_tombstones_per_slice = round(workList.avgTombstonesPerSlice, 1);
  return { ...figures, ...statsFigures('history_after_retention', await stats(b, HISTORY)) };
}

/**
 * A major compaction within the schema's gc_grace, then one with gc_grace 0 (as once it has
 * passed), each followed by the reads. `deletedAt`: when the pass ended (performance.now()).
 */
async function compactionPhases(b: Bench, options: TableOptions, reads: Reads, deletedAt: number): Promise<Figures> {
  b.log(`major compaction, gc_grace_seconds ${options.gcGraceSeconds}`);
  const figures: Figures = { ...costFigures('compact_in_grace', await compact(b)), ...statsFigures('history_compacted_in_grace', await stats(b, HISTORY)) };
  Object.assign(figures, await reads('read_compacted_in_grace'));

  b.log('major compaction with gc_grace_seconds 0 (as once gc_grace has passed)');
  await setGcGrace(b, 0);
  // The SSTables' tombstone drop-time histograms round up to the minute: a tombstone counts as
  // droppable only a minute after its delete.
  await sleep(Math.max(0, DROP_TIME_ROUNDING_MS - (performance.now() - deletedAt)));
  Object.assign(figures, statsFigures('history_droppable', await stats(b, HISTORY)));
  Object.assign(figures, costFigures('compact_purge', await compact(b)), statsFigures('history_purged', await stats(b, HISTORY)));
  // Back to the schema's setting before reading: a read drops tombstones that are purgeable at
  // its gc_grace before counting them, which would flatter the figures.
  await setGcGrace(b, options.gcGraceSeconds);
  return { ...figures, ...(await reads('read_purged')) };
}

async function measureAll(b: Bench, o: Options): Promise<Figures> {
  const plan: HistoryPlan = {
    tenant_id: 'bench-retention', application_id: 'app', days: o.days, conversations: o.conversations, messagesPerDay: o.messagesPerDay,
    dormantEvery: o.dormantEvery, dormantSinceDays: o.retentionDays + 1, now: Date.now(), seed: 13,
  };
  const convs = planHistory(plan);
  const ref = (c: PlannedConversation): ConversationRef => ({ tenant_id: plan.tenant_id, application_id: plan.application_id, conversation_id: c.conversation_id });
  const { active, samples } = samplesOf(convs, ref);
  const reads: Reads = async (prefix) => readFigures(prefix, await readPhase(b, active, samples, o));

  const figures = await writePhase(b, o, plan, convs);
  const options = await tableOptions(b.tracer.client, b.keyspace, HISTORY);
  b.log(`${HISTORY}: ${options.compaction}, gc_grace_seconds ${options.gcGraceSeconds}, default_time_to_live ${options.defaultTtl}`);
  Object.assign(figures, { gc_grace_seconds: options.gcGraceSeconds, default_ttl_s: options.defaultTtl });
  b.idle = await idleCores(b.cassandra.pids, IDLE_SECONDS);
  figures.cassandra_idle_cores = round(b.idle, 3);

  b.log('reads before retention');
  Object.assign(figures, await reads('read_before'));
  Object.assign(figures, await retentionPhase(b, o, plan, convs));
  const deletedAt = performance.now();
  b.log('reads after retention');
  Object.assign(figures, await reads('read_after'));
  return { ...figures, ...(await compactionPhases(b, options, reads, deletedAt)) };
}
