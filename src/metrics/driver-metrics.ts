/**
 * Health of the node's Redis connections and of its Cassandra / ScyllaDB client, read at scrape
 * time (src/redis/health.ts, src/store/cassandra/health.ts):
 *
 *   chat_redis_connections{connection, state}      gauge: the node's connections by name and
 *                                                  state (`ready` serves commands)
 *   chat_redis_errors_total{connection}            connection errors
 *   chat_redis_reconnects_total{connection}        reconnection attempts
 *   chat_cassandra_hosts{state="up"|"down"}        gauge: hosts the client knows
 *   chat_cassandra_connections                     gauge: open connections, every host
 *   chat_cassandra_requests_in_flight              gauge
 *   chat_cassandra_request_duration_seconds        histogram of successful responses
 *   chat_cassandra_errors_total{kind}              authentication, client_timeout, connection,
 *                                                  other, read_timeout, unavailable, write_timeout
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RedisHealth } from '../redis/health.ts';
import { CASSANDRA_LATENCY_BUCKETS, type CassandraHealth } from '../store/cassandra/health.ts';

export function registerRedisMetrics(registry: Registry, health: RedisHealth): void {
  new Gauge({
    name: 'chat_redis_connections',
    help: 'Redis connections of this node, by connection name and state (ready serves commands)',
    labelNames: ['connection', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [connection, states] of health.connections()) for (const [state, n] of states) this.set({ connection, state }, n);
    },
  });
  const counter = (name: string, help: string, counts: Map<string, number>): void => {
    new Counter({
      name,
      help,
      labelNames: ['connection'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [connection, n] of counts) this.inc({ connection }, n);
      },
    });
  };
  counter('chat_redis_errors_total', 'Redis connection errors, by connection name', health.errors);
  counter('chat_redis_reconnects_total', 'Redis reconnection attempts, by connection name', health.reconnects);
}

export function registerCassandraMetrics(registry: Registry, health: CassandraHealth): void {
  new Gauge({
    name: 'chat_cassandra_hosts',
    help: 'Cassandra hosts the driver knows, by state (up, down)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { up, down } = health.hosts();
      this.set({ state: 'up' }, up);
      this.set({ state: 'down' }, down);
    },
  });
  new Gauge({
    name: 'chat_cassandra_connections',
    help: 'Open Cassandra connections, every host',
    registers: [registry],
    collect() {
      this.set(health.pool().connections);
    },
  });
  new Gauge({
    name: 'chat_cassandra_requests_in_flight',
    help: 'Cassandra requests in flight, every host',
    registers: [registry],
    collect() {
      this.set(health.pool().inFlight);
    },
  });
  new Counter({
    name: 'chat_cassandra_errors_total',
    help: 'Cassandra request errors by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, n] of health.errors) this.inc({ kind }, n);
    },
  });
  const name = 'chat_cassandra_request_duration_seconds';
  const help = 'Latency of successful Cassandra requests';
  const values = () => {
    const { buckets, count, sum } = health.latency;
    const out: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
    let cumulative = 0;
    CASSANDRA_LATENCY_BUCKETS.forEach((le, i) => {
      cumulative += buckets[i] ?? 0;
      out.push({ value: cumulative, labels: { le }, metricName: `${name}_bucket` });
    });
    out.push({ value: count, labels: { le: '+Inf' }, metricName: `${name}_bucket` });
    out.push({ value: sum, labels: {}, metricName: `${name}_sum` });
    out.push({ value: count, labels: {}, metricName: `${name}_count` });
    return out;
  };
  (registry as unknown as { registerMetric(m: unknown): void }).registerMetric({
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => ({ name, help, type: 'histogram', aggregator: 'sum', values: values() }),
    reset: () => undefined,
  });
}
