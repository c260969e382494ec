/**
 * The cost of forwarding, measured head to head in the 3-node cluster: the same sends (to
 * conversations that one node owns) straight to that owner's port (every call runs locally), and
 * straight to another node's port (every call is forwarded to the owner over the internal
 * channel). Same actor work, same store, same events; the difference is the forwarding hop.
 *
 *  - latency: a light fixed rate (open loop, so queueing behind a stall is charged), first to the
 *    owner, then to the other node;
 *  - CPU: wrk at the maximum rate against each, with every node's CPU time: per-send costs fall
 *    as the rate rises (more work per wake-up: group commits, corked writes, Redis pipelining),
 *    so the costs that compare with the balancer runs, and give throughput per core, are those
 *    at saturation.
 *
 * Owners are found from the outside, by the nodes' own counters: a send to node A of a
 * conversation A owns counts as `local` on A, any other as `forwarded`. Every run is checked the
 * same way afterwards (all local, or all forwarded, nothing retried).
 */
import { BASE, expectOk, type Api } from './fanout-sender.ts';
import { sendBody } from './messages.ts';
import { sendRequests, type Conversation } from './cluster-load.ts';
import { busy, callsBetween, ClusterCpu, nodesCpu, scrape, scrapeAll, type CpuUse } from './lib/cluster-metrics.ts';
import type { BenchCluster, BenchClusterNode } from './lib/cluster-up.ts';
import { BenchError } from './lib/errors.ts';
import { runFixedRate, type FixedRateReport } from './lib/fixed-rate.ts';
import { runWrkMix } from './lib/wrk-script.ts';
import type { WrkResult } from './lib/wrk.ts';

/** Conversations of the owner's to send to: enough that the mix is not one hot actor. */
const WANTED = 24;
const WARMUP_SECONDS = 1;

export interface DirectRun {
  target: 'owner' | 'forwarded';
  /** The light fixed-rate run: latency. */
  light: FixedRateReport;
  lightWrk: WrkResult;
  /** The maximum-rate run: throughput and CPU per send. */
  max: WrkResult;
  maxCpu: CpuUse;
}

/** Conversations `node` owns, found by sending one message each to it and reading its counters. */
async function ownedBy(node: BenchClusterNode, api: Api, conversations: Conversation[]): Promise<Conversation[]> {
  const owned: Conversation[] = [];
  const direct: Api = { origin: node.origin, headers: api.headers };
  for (const [i, c] of conversations.entries()) {
    if (owned.length >= WANTED) break;
    const before = await scrape(node.metricsUrl);
    await expectOk(direct, 'POST', `${BASE}/conversations/${c.id}/messages`, JSON.parse(sendBody(c.members[0]!, `c${i}`)));
    const after = await scrape(node.metricsUrl);
    if (after.local - before.local === 1 && after.forwarded === before.forwarded) owned.push(c);
    else if (after.forwarded - before.forwarded !== 1) throw new BenchError(`cluster: a send to ${node.id} counted neither as local nor as forwarded there (local +${after.local - before.local}, forwarded +${after.forwarded - before.forwarded})`);
  }
  if (owned.length === 0) throw new BenchError(`cluster: ${node.id} owns none of ${conversations.length} conversations`);
  return owned;
}

type Calls = ReturnType<typeof callsBetween>;

function expectWhere(target: DirectRun['target'], node: BenchClusterNode, calls: Calls): void {
  const local = target === 'owner';
  if ((local ? calls.forwarded : calls.local) !== 0 || calls.retried !== 0 || calls.unavailable !== 0) {
    throw new BenchError(`cluster: sends straight to ${node.id} were expected all ${local ? 'local' : 'forwarded'}, but local ${calls.local}, forwarded ${calls.forwarded}, retried ${calls.retried} (did the ring change?)`);
  }
}

export async function directComparison(
  cluster: BenchCluster,
  api: Api,
  conversations: Conversation[],
  o: { rate: number; lightSeconds: number; maxSeconds: number; connections: number },
  log: (line: string) => void,
): Promise<{ owner: DirectRun; forwarded: DirectRun; conversations: number }> {
  const [owner, other] = cluster.nodes;
  if (!owner || !other) throw new BenchError('cluster: the direct comparison needs two nodes');
  const mine = await ownedBy(owner, api, conversations);
  const requests = sendRequests(api, mine);
  const pair: Array<[DirectRun['target'], BenchClusterNode]> = [['owner', owner], ['forwarded', other]];
  log(`3 nodes: ${mine.length} conversations owned by ${owner.id}; sends to them straight to ${owner.id} (local) and to ${other.id} (forwarded): ${o.rate}/s for ${o.lightSeconds}s after ${WARMUP_SECONDS}s unrecorded, then wrk -c${o.connections} for ${o.maxSeconds}s`);

  const light = new Map<DirectRun['target'], { report: FixedRateReport; wrk: WrkResult }>();
  for (const [target, node] of pair) {
    const before = await scrapeAll(cluster);
    const r = await runFixedRate({ origin: node.origin, requests, rate: o.rate, seconds: o.lightSeconds, warmupSeconds: WARMUP_SECONDS, connections: o.connections, seed: 1 });
    expectWhere(target, node, callsBetween(before, await scrapeAll(cluster)));
    const l = r.report.latencyMs;
    log(`  ${o.rate}/s to ${node.id} (${target}): p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms, max ${l.max.toFixed(2)} ms (generator lag p99 ${r.report.lagMs.p99.toFixed(2)} ms)`);
    light.set(target, r);
  }
  const runs: DirectRun[] = [];
  for (const [target, node] of pair) {
    const cpu = new ClusterCpu(cluster);
    const before = await scrapeAll(cluster);
    cpu.start();
    const w = await runWrkMix({ origin: node.origin, requests, connections: o.connections, seconds: o.maxSeconds });
    const used = cpu.read();
    expectWhere(target, node, callsBetween(before, await scrapeAll(cluster)));
    const per = (s: number): string => `${((s / w.requests) * 1e6).toFixed(0)} µs`;
    log(`  max to ${node.id} (${target}): ${Math.round(w.requestsPerSecond)} req/s, p50 ${w.latencyMs.p50.toFixed(2)} ms, p99 ${w.latencyMs.p99.toFixed(2)} ms; CPU per send: ${per(nodesCpu(used))} (${used.nodes.map((s, i) => `${cluster.nodes[i]!.id} ${per(s)}`).join(', ')}), redis ${per(used.redis)}${cluster.cassandra ? `, cassandra ${per(used.cassandraNet)} net of idle` : ''}; ${busy(used)}`);
    const l = light.get(target)!;
    runs.push({ target, light: l.report, lightWrk: l.wrk, max: w, maxCpu: used });
  }
  return { owner: runs[0]!, forwarded: runs[1]!, conversations: mine.length };
}
