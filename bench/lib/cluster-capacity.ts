/**
 * The capacity arithmetic of docs/capacity.md, from the costs one `cluster` run measured, so that
 * every run prints its own answer with its own constants.
 *
 * A node is one event loop: one core is its budget. Its CPU goes to sends (each one the edge, the
 * actor, the store write, the bus publish, and, in a cluster of N, a forwarding hop for the
 * (N−1)/N of them whose owner is another node), history pages, and events written to streams.
 * Those costs add up on the same core, so the node count for CPU is the sum of the loads, not
 * the largest of them; connections add a cap of their own (memory, descriptors, and what a
 * node failure moves to the others).
 */

/** Measured CPU microseconds per operation, summed over every node (not HAProxy, not Redis). */
export interface UnitCosts {
  /** A send that runs where it lands (1-node cluster). */
  sendLocalUs: number;
  /** What forwarding adds to one send (both nodes), from the head-to-head comparison. */
  forwardUs: number;
  pageUs: number;
  eventUs: number;
  /** Redis CPU per send (rate limits, publishes, membership), the cluster's single-threaded part. */
  redisSendUs: number;
  /**
   * Node CPU per send as the 3-node cluster paid it through the balancer, every process on one
   * core: the pessimistic bound (see docs/capacity.md for why it is far above the parts).
   */
  sendCoLocatedUs: number;
  /**
   * On Cassandra: its CPU per send and per history page, net of its idle burn, measured on one
   * node with replication factor 1 (each replica applies every write: × RF for RF > 1).
   */
  cassandraSendUs?: number;
  cassandraPageUs?: number;
}

export interface Tenant {
  name: string;
  /** Messages sent per second. */
  rate: number;
  /** Streams open at once. */
  connections: number;
  /** Streams each message is written to (members online x their open streams). */
  receiversPerMessage: number;
  /** History pages read per second. */
  pagesPerSecond: number;
}

/** Assumptions of the worked examples, stated once (docs/capacity.md explains each). */
export const ASSUMPTIONS = {
  /** Share of a core a node is planned to use: room for bursts, GC, and latency. */
  utilization: 0.6,
  /** Streams one node holds at most (memory, descriptors, the reconnect storm when a node fails). */
  connectionsPerNode: 50_000,
  /** A node more than the load needs, so that one failure leaves enough. */
  spareNodes: 1,
};

export const EXAMPLES: Tenant[] = [
  { name: 'A: 2k msgs/s, 50k streams', rate: 2000, connections: 50_000, receiversPerMessage: 5, pagesPerSecond: 200 },
  { name: 'B: 20k msgs/s, 500k streams', rate: 20_000, connections: 500_000, receiversPerMessage: 5, pagesPerSecond: 2000 },
];

export interface Sizing {
  tenant: Tenant;
  /** Cores of node CPU the load needs at full use. */
  cores: number;
  byCpu: number;
  byConnections: number;
  nodes: number;
  /** Share of one Redis core the sends need. */
  redisShare: number;
  /** On Cassandra: its cores at replication factor 1 (sends and pages), before any headroom. */
  cassandraCoresRf1?: number;
}

/** CPU per send in a cluster of `nodes`: the forwarded share of sends pays the hop. */
export const sendUs = (c: UnitCosts, nodes: number): number => c.sendLocalUs + ((nodes - 1) / nodes) * c.forwardUs;

/** `sendUsOverride`: a per-send cost to use instead of local + forward (the pessimistic sizing). */
export function size(t: Tenant, c: UnitCosts, sendUsOverride?: number): Sizing {
  // Every send forwarded, as in a large cluster ((N−1)/N → 1): the sizing does not depend on N.
  const cpuSeconds = (t.rate * (sendUsOverride ?? c.sendLocalUs + c.forwardUs) + t.rate * t.receiversPerMessage * c.eventUs + t.pagesPerSecond * c.pageUs) / 1e6;
  const byCpu = Math.ceil(cpuSeconds / ASSUMPTIONS.utilization);
  const byConnections = Math.ceil(t.connections / ASSUMPTIONS.connectionsPerNode);
  const sizing: Sizing = { tenant: t, cores: cpuSeconds, byCpu, byConnections, nodes: Math.max(byCpu, byConnections, 1) + ASSUMPTIONS.spareNodes, redisShare: (t.rate * c.redisSendUs) / 1e6 };
  if (c.cassandraSendUs !== undefined) sizing.cassandraCoresRf1 = (t.rate * c.cassandraSendUs + t.pagesPerSecond * (c.cassandraPageUs ?? 0)) / 1e6;
  return sizing;
}

export function perCore(c: UnitCosts): { sendsLocal: number; sendsForwarded: number; pages: number; events: number; redisSends: number; cassandraSends: number } {
  const per = (us: number): number => (us > 0 ? Math.round(1e6 / us) : 0);
  return { sendsLocal: per(c.sendLocalUs), sendsForwarded: per(c.sendLocalUs + c.forwardUs), pages: per(c.pageUs), events: per(c.eventUs), redisSends: per(c.redisSendUs), cassandraSends: per(c.cassandraSendUs ?? 0) };
}

/** Replicas the Cassandra sizing is also given for: the production setting (docs/deploy.md). */
const PRODUCTION_RF = 3;

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Notes for the report: the formula with this run's constants, and the worked examples. */
export function capacityNotes(c: UnitCosts): string[] {
  const p = perCore(c);
  const a = ASSUMPTIONS;
  return [
    `per node core (this run): ${fmt(p.sendsLocal)} sends/s run locally, ${fmt(p.sendsForwarded)} sends/s all forwarded (+${c.forwardUs.toFixed(0)} µs each), ${fmt(p.pages)} history pages/s, ${fmt(p.events)} events/s; Redis: ${fmt(p.redisSends)} sends/s per Redis core`,
    `nodes = max(ceil((R x ${(c.sendLocalUs + c.forwardUs).toFixed(0)} µs + R x f x ${c.eventUs.toFixed(1)} µs + H x ${c.pageUs.toFixed(0)} µs) / ${a.utilization} core), ceil(C / ${fmt(a.connectionsPerNode)})) + ${a.spareNodes} (R msgs/s, f streams per message, H pages/s, C streams)`,
    ...EXAMPLES.map((t) => {
      const s = size(t, c);
      const worst = size(t, c, c.sendCoLocatedUs);
      const cassandra = s.cassandraCoresRf1 === undefined ? '' : `; Cassandra ${s.cassandraCoresRf1.toFixed(2)} cores at RF 1, ~${(s.cassandraCoresRf1 * PRODUCTION_RF).toFixed(1)} at RF ${PRODUCTION_RF} (x RF, an upper bound), before headroom`;
      return `example ${t.name} (f = ${t.receiversPerMessage}, H = ${fmt(t.pagesPerSecond)}/s): ${s.cores.toFixed(2)} cores of node CPU -> ${s.byCpu} by CPU, ${s.byConnections} by connections -> ${s.nodes} nodes (${worst.nodes} at the co-located ${c.sendCoLocatedUs.toFixed(0)} µs per send); Redis at ${Math.round(s.redisShare * 100)}% of a core${cassandra}`;
    }),
    ...(c.cassandraSendUs === undefined
      ? []
      : [`Cassandra (RF 1, net of idle): ${c.cassandraSendUs.toFixed(0)} µs per send, ${(c.cassandraPageUs ?? 0).toFixed(0)} µs per history page -> ${fmt(p.cassandraSends)} sends/s per Cassandra core at RF 1, ~${fmt(p.cassandraSends / PRODUCTION_RF)} at RF ${PRODUCTION_RF}`]),
  ];
}
