/**
 * The `cluster` bench's fan-out step: BENCH_CLUSTER_CONNECTIONS SSE streams (3,000) opened through
 * the load balancer (which spreads them round robin over the nodes), all following one CHANNEL,
 * while messages go to it through the balancer at BENCH_CLUSTER_FANOUT_RATE (10/s). The receivers
 * and the sender are the `fanout` scenario's (bench/lib/sse-clients.ts, bench/fanout-sender.ts):
 * every stream must get every message exactly once; latency is receive time − send time.
 *
 * A message reaches the streams of every node through Redis (one publish per channel, one
 * subscription per channel per node), and each node writes it to its own streams, through
 * HAProxy to the clients.
 */
import { rssKiB } from './fanout-proc.ts';
import { BASE, USERS, expectOk, sendSteady, type Api } from './fanout-sender.ts';
import { busy, ClusterCpu, scrapeAll, type CpuUse } from './lib/cluster-metrics.ts';
import type { BenchCluster } from './lib/cluster-up.ts';
import { devUserToken } from './lib/dev-token.ts';
import { BenchError } from './lib/errors.ts';
import { assertNotInterrupted } from './lib/processes.ts';
import { SseClients, type PhaseReport } from './lib/sse-clients.ts';

const SPARE_FILES = 512;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface FanoutResult {
  connections: number;
  rate: number;
  report: PhaseReport;
  eventsPerSecond: number;
  cpu: CpuUse;
  /** Node CPU over the connect phase (every stream authenticated, subscribed, sent `ready`). */
  connectCpu: CpuUse;
  connectSeconds: number;
  /** Streams each node held (chat_realtime_streams_open). */
  streamsPerNode: number[];
  /** RSS growth with every stream open and idle, per stream: nodes together, and HAProxy. */
  nodeKBPerStream: number;
  haproxyKBPerStream: number;
  lost: number;
}

export async function fanoutStep(cluster: BenchCluster, api: Api, connections: number, rate: number, seconds: number, warmupSeconds: number, log: (line: string) => void): Promise<FanoutResult> {
  const channel = await expectOk(api, 'POST', `${BASE}/conversations`, { type: 'CHANNEL', name: 'cluster fanout bench', member_user_ids: USERS });
  const conversationId = channel.conversation_id as string;
  const paths: string[] = [];
  for (const user of USERS) {
    const access = await devUserToken({ idpBaseUrl: cluster.idp, userId: user, clientId: 'acme-support-web', clientSecret: 'acme-support-web-secret' });
    const cred = await expectOk({ origin: cluster.lb, headers: { Authorization: `Bearer ${access.token}` } }, 'GET', `${BASE}/notifications/realtime-token`);
    const url = new URL(cred.stream_url as string);
    if (url.port !== String(cluster.lbPort)) throw new BenchError(`cluster: stream_url ${url.href} does not point at the balancer (port ${cluster.lbPort})`);
    paths.push(url.pathname + url.search);
  }
  // The send path warmed up (JIT) before any stream exists; nobody receives these.
  let seq = (await sendSteady(api, conversationId, 0, 50, 1)).untilSeq;
  await sleep(500);

  const rss = (): number[] => [...cluster.nodes.map((n) => rssKiB(n.pid)), rssKiB(cluster.haproxyPid)];
  const rssBefore = rss();
  const clients = await SseClients.start(connections + SPARE_FILES);
  try {
    log(`${cluster.size} node(s): opening ${connections} streams through the balancer`);
    const connectCpu = new ClusterCpu(cluster);
    connectCpu.start();
    const connected = await clients.connect({ host: '127.0.0.1', port: cluster.lbPort, paths, connections });
    const connectUse = connectCpu.read();
    if (connected.ready !== connections) throw new BenchError(`cluster: ${connected.ready} of ${connections} streams opened (${connected.failed} failed; first error: ${connected.firstError})`);
    await sleep(2000);
    const rssIdle = rss();
    const streamsPerNode = (await scrapeAll(cluster)).map((c) => c.streamsOpen);
    const grow = (i: number): number => ((rssIdle[i]! - rssBefore[i]!) * 1024) / 1000 / connections;
    const nodeKB = cluster.nodes.reduce((sum, _n, i) => sum + grow(i), 0);
    const haproxyKB = grow(cluster.nodes.length);
    log(`  ${connections} streams open in ${connected.seconds.toFixed(1)}s (per node: ${streamsPerNode.join(', ')}); RSS per idle stream: nodes ${nodeKB.toFixed(2)} KB, haproxy ${haproxyKB.toFixed(2)} KB`);

    const phase = async (secs: number): Promise<{ report: PhaseReport; cpu: CpuUse; sentSeconds: number }> => {
      assertNotInterrupted();
      const fromSeq = seq;
      await clients.start(fromSeq, Math.round(rate * secs));
      const cpu = new ClusterCpu(cluster);
      cpu.start();
      const sent = await sendSteady(api, conversationId, fromSeq, rate, secs);
      const used = cpu.read();
      seq = sent.untilSeq;
      const report = await clients.stop(sent.seconds, 5000);
      return { report, cpu: used, sentSeconds: sent.seconds };
    };
    if (warmupSeconds > 0) {
      log(`  warming up at ${rate} msgs/s (${warmupSeconds}s, not recorded)`);
      await phase(warmupSeconds);
    }
    log(`  measuring ${rate} msgs/s to ${connections} streams (${(rate * connections).toLocaleString('en-US')} events/s offered, ${seconds}s)`);
    const { report, cpu, sentSeconds } = await phase(seconds);
    const lost = report.missing + report.duplicates;
    const eventsPerSecond = report.events / sentSeconds;
    const perEvent = (s: number): string => `${((s / report.events) * 1e6).toFixed(1)} µs`;
    log(
      `  ${Math.round(eventsPerSecond).toLocaleString('en-US')} events/s, p50 ${report.latencyMs.p50.toFixed(2)} ms, p99 ${report.latencyMs.p99.toFixed(2)} ms, max ${report.latencyMs.max.toFixed(2)} ms; CPU per event: nodes ${perEvent(cpu.nodes.reduce((a, b) => a + b, 0))} (${cpu.nodes.map((s) => `${Math.round((s / cpu.seconds) * 100)}%`).join(' + ')} of a core), haproxy ${perEvent(cpu.haproxy)}, redis ${perEvent(cpu.redis)}; lost ${lost}, closed by the server ${report.closedByServer}; ${busy(cpu)}`,
    );
    return { connections, rate, report, eventsPerSecond, cpu, connectCpu: connectUse, connectSeconds: connected.seconds, streamsPerNode, nodeKBPerStream: nodeKB, haproxyKBPerStream: haproxyKB, lost };
  } finally {
    await clients.close();
  }
}
