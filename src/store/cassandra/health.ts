/**
 * Cassandra / ScyllaDB health, seen from the node's driver client: hosts up and down, open
 * connections and requests in flight (the client's state), successful responses with their
 * latency, and errors by kind (the driver's DefaultMetrics events). Read at scrape time for
 * `chat_cassandra_*` (src/metrics/driver-metrics.ts).
 */
import type cassandra from 'cassandra-driver';

export const CASSANDRA_ERROR_KINDS = ['authentication', 'client_timeout', 'connection', 'other', 'read_timeout', 'unavailable', 'write_timeout'] as const;
export type CassandraErrorKind = (typeof CASSANDRA_ERROR_KINDS)[number];
const EMITTERS: Record<CassandraErrorKind, string> = {
  authentication: 'authentication',
  client_timeout: 'clientTimeout',
  connection: 'connection',
  other: 'other',
  read_timeout: 'readTimeout',
  unavailable: 'unavailable',
  write_timeout: 'writeTimeout',
};

/** Histogram buckets of response latency, seconds. */
export const CASSANDRA_LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Emitter {
  on(event: 'increment', listener: (arg: unknown) => void): void;
}

export class CassandraHealth {
  readonly errors = new Map<CassandraErrorKind, number>(CASSANDRA_ERROR_KINDS.map((k) => [k, 0]));
  /** Successful responses per latency bucket (the last one: past every bound), and their sum. */
  readonly latency = { buckets: new Float64Array(CASSANDRA_LATENCY_BUCKETS.length + 1), count: 0, sum: 0 };

  constructor(private readonly client: cassandra.Client) {
    const metrics = client.metrics as unknown as { errors?: Record<string, Emitter>; responses?: { success?: Emitter } };
    for (const kind of CASSANDRA_ERROR_KINDS) {
      metrics.errors?.[EMITTERS[kind]]?.on('increment', () => this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1));
    }
    metrics.responses?.success?.on('increment', (latency) => this.observe(latency));
  }

  /** The driver reports latency as process.hrtime's [seconds, nanoseconds]. */
  private observe(latency: unknown): void {
    const [s, ns] = Array.isArray(latency) ? (latency as number[]) : [0, 0];
    const seconds = (s ?? 0) + (ns ?? 0) / 1e9;
    let i = CASSANDRA_LATENCY_BUCKETS.findIndex((b) => seconds <= b);
    if (i === -1) i = CASSANDRA_LATENCY_BUCKETS.length;
    this.latency.buckets[i] = (this.latency.buckets[i] ?? 0) + 1;
    this.latency.count += 1;
    this.latency.sum += seconds;
  }

  hosts(): { up: number; down: number } {
    let up = 0;
    let down = 0;
    for (const host of this.client.hosts.values()) {
      if (host.isUp()) up += 1;
      else down += 1;
    }
    return { up, down };
  }

  /**
   * Whether the driver holds a host of `dc` down (every connection to it lost: a killed node is
   * seen at once, before the other nodes' failure detectors convict it).
   */
  downIn(dc: string): boolean {
    for (const host of this.client.hosts.values()) if (host.datacenter === dc && !host.isUp()) return true;
    return false;
  }

  /** Open connections and requests in flight, over every host. */
  pool(): { connections: number; inFlight: number } {
    const state = this.client.getState();
    let connections = 0;
    let inFlight = 0;
    for (const host of state.getConnectedHosts()) {
      connections += state.getOpenConnections(host);
      inFlight += state.getInFlightQueries(host);
    }
    return { connections, inFlight };
  }
}
