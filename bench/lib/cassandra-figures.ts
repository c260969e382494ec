/**
 * What the Cassandra server itself says about a table and a read, for benches that measure
 * storage costs rather than request rates:
 *
 *  - TracingClient: wraps the store's driver client so that, while switched on, every statement
 *    runs with CQL tracing (`traceQuery: true`) and its trace id is kept. The store under test
 *    runs its own statements unchanged (the same CQL, options and paging), so a traced read is
 *    exactly the production read;
 *  - readTrace: the replica's own account of a traced read ("Read N live rows and M tombstone
 *    cells", the SSTables it merged), from system_traces;
 *  - tableOptions / tableStats: the table's schema options (gc_grace_seconds, compaction) and
 *    `nodetool tablestats` figures (SSTable count, space, droppable tombstone ratio, tombstones per
 *    slice over the last five minutes).
 */
import cassandra from 'cassandra-driver';
import type { CqlClient, QueryOptions, Row } from '../../src/store/cassandra/cql.ts';

export interface TracedStatement {
  query: string;
  traceId: cassandra.types.Uuid;
}

export class TracingClient implements CqlClient {
  /** Statements traced since the last take(). */
  private traced: TracedStatement[] = [];
  private on = false;

  constructor(readonly client: cassandra.Client) {}

  /** Traces every statement until the returned function is called; it answers what ran. */
  start(): () => TracedStatement[] {
    this.traced = [];
    this.on = true;
    return () => {
      this.on = false;
      const taken = this.traced;
      this.traced = [];
      return taken;
    };
  }

  async execute(query: string, params: unknown[], options: QueryOptions): Promise<{ rows: readonly Row[] }> {
    if (!this.on) return this.client.execute(query, params, options);
    const result = await this.client.execute(query, params, { ...options, traceQuery: true });
    if (result.info.traceId) this.traced.push({ query, traceId: result.info.traceId });
    return result;
  }

  batch(queries: Array<{ query: string; params: unknown[] }>, options: QueryOptions): Promise<unknown> {
    return this.client.batch(queries, options);
  }

  shutdown(): Promise<void> {
    return this.client.shutdown();
  }
}

/** One read as the replica reports it. */
export interface ReadTrace {
  liveRows: number;
  tombstoneCells: number;
  /** SSTables merged with the memtables (0 when the data was in memtables only). */
  sstables: number;
  /** Microseconds from the coordinator's start to its last event. */
  durationUs: number;
}

const LIVE_AND_TOMBSTONES = /Read (\d+) live rows and (\d+) tombstone cells/;
const MERGED = /Merged data from memtables and (\d+) sstables/;

/** Sums the read events of a trace (one statement; a single-partition read has one of each). */
export function readFromTrace(trace: cassandra.metadata.QueryTrace): ReadTrace {
  const out: ReadTrace = { liveRows: 0, tombstoneCells: 0, sstables: 0, durationUs: Number(trace.duration) };
  for (const e of trace.events) {
    const activity = String(e.activity);
    const read = LIVE_AND_TOMBSTONES.exec(activity);
    if (read) {
      out.liveRows += Number(read[1]);
      out.tombstoneCells += Number(read[2]);
    }
    const merged = MERGED.exec(activity);
    if (merged) out.sstables += Number(merged[1]);
  }
  return out;
}

/**
 * The trace of a statement. Trace events are written asynchronously after the answer, so the
 * driver's getTrace may see an incomplete session: it retries until the session has a duration;
 * the read events come before that, so they are all there once it answers.
 */
export async function readTrace(client: cassandra.Client, traceId: cassandra.types.Uuid): Promise<ReadTrace> {
  return readFromTrace(await client.metadata.getTrace(traceId, cassandra.types.consistencies.one));
}

export interface TableOptions {
  gcGraceSeconds: number;
  defaultTtl: number;
  /** The compaction strategy's class, without its package. */
  compaction: string;
}

export async function tableOptions(client: cassandra.Client, keyspace: string, table: string): Promise<TableOptions> {
  const rs = await client.execute(
    'SELECT gc_grace_seconds, default_time_to_live, compaction FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
    [keyspace, table],
    { prepare: true },
  );
  const row = rs.first();
  if (!row) throw new Error(`no table ${keyspace}.${table}`);
  const compaction = (row.compaction as Record<string, string> | null)?.class ?? 'unknown';
  return { gcGraceSeconds: Number(row.gc_grace_seconds), defaultTtl: Number(row.default_time_to_live), compaction: compaction.replace(/^.*\./, '') };
}

export interface TableStats {
  sstables: number;
  spaceLiveBytes: number;
  partitionsEstimate: number;
  /** Tombstones droppable now (older than gc_grace_seconds) over all cells of the SSTables. */
  droppableTombstoneRatio: number;
  /** Over the reads of the last five minutes (the table's histograms; NaN when none). */
  avgTombstonesPerSlice: number;
  maxTombstonesPerSlice: number;
  avgLiveCellsPerSlice: number;
}

/** `Label: value` lines of `nodetool tablestats <ks>.<table>` (one table) into figures. */
export function parseTableStats(text: string): TableStats {
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([^:]+):\s*(.*)$/.exec(line);
    if (m) fields.set(m[1]!.trim(), m[2]!.trim());
  }
  const num = (label: string): number => {
    const value = fields.get(label);
    if (value === undefined) throw new Error(`nodetool tablestats printed no "${label}"`);
    return Number.parseFloat(value);
  };
  return {
    sstables: num('SSTable count'),
    spaceLiveBytes: num('Space used (live)'),
    partitionsEstimate: num('Number of partitions (estimate)'),
    droppableTombstoneRatio: num('Droppable tombstone ratio'),
    avgTombstonesPerSlice: num('Average tombstones per slice (last five minutes)'),
    maxTombstonesPerSlice: num('Maximum tombstones per slice (last five minutes)'),
    avgLiveCellsPerSlice: num('Average live cells per slice (last five minutes)'),
  };
}

export async function tableStats(nodetool: (args: string[]) => Promise<string>, keyspace: string, table: string): Promise<TableStats> {
  return parseTableStats(await nodetool(['tablestats', `${keyspace}.${table}`]));
}
