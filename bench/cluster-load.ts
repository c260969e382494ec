/**
 * The `cluster` bench's request phases, through the load balancer as clients use it: the GROUP
 * conversations of the `messages` scenario, sends at the maximum rate (wrk, a random conversation
 * and member per request) and history pages (GET ?limit=50), each measured with the CPU every
 * process of the cluster used and where the nodes ran the conversation operations.
 */
import { inParallel } from './lib/parallel.ts';
import { BASE, expectOk, type Api } from './fanout-sender.ts';
import { messageCounts } from './lib/messages-api.ts';
import { sendBody } from './messages.ts';
import { busy, callsBetween, ClusterCpu, scrapeAll, type CpuUse } from './lib/cluster-metrics.ts';
import type { BenchCluster } from './lib/cluster-up.ts';
import { BenchError } from './lib/errors.ts';
import type { BenchSettings } from './lib/scenario.ts';
import { runWrkMix, type MixRequest } from './lib/wrk-script.ts';
import type { WrkResult } from './lib/wrk.ts';

/** The demo users of acme with access to `support`, in rotation as the members (as in `messages`). */
const USERS = ['alice', 'bob', 'carol', 'frank', 'grace'];
export const CONVERSATIONS = 200;
const MEMBERS = 3;
export const PAGE = 50;

export interface Conversation {
  id: string;
  members: string[];
}

export async function createConversations(api: Api): Promise<Conversation[]> {
  return inParallel(Array.from({ length: CONVERSATIONS }, (_, i) => i), 16, async (i) => {
    const members = Array.from({ length: MEMBERS }, (_, k) => USERS[(i + k) % USERS.length]!);
    const res = await expectOk(api, 'POST', `${BASE}/conversations`, { type: 'GROUP', name: `cluster bench ${i}`, member_user_ids: members });
    return { id: res.conversation_id as string, members };
  });
}

/** Every (conversation, member) send, as prebuilt requests for wrk and the fixed-rate generator. */
export function sendRequests(api: Api, conversations: Conversation[]): MixRequest[] {
  const headers = { ...api.headers, 'Content-Type': 'application/json' };
  return conversations.flatMap((c, i) => c.members.map((m) => ({ method: 'POST', path: `${BASE}/conversations/${c.id}/messages`, headers, body: sendBody(m, `c${i}`) })));
}

/** Messages stored in the conversations, counted by paging their history (Cassandra's seqs may have gaps). */
export async function storedMessages(api: Api, conversations: Conversation[]): Promise<number> {
  return (await messageCounts(api, conversations)).reduce((a, b) => a + b, 0);
}

export interface LoadPhase {
  wrk: WrkResult;
  cpu: CpuUse;
  /** Conversation operations over the measured phase, summed over the nodes. */
  calls: ReturnType<typeof callsBetween>;
}

/**
 * Warm-up (not measured), then one measured wrk run of the mix against the balancer. The warm-up
 * lasts BENCH_WARMUP_SECONDS per node: each node of N sees about 1/N of the requests, and its JIT
 * needs as many as a single node's did (3 s for 3 nodes measured 2053, 1591, 1161 µs of node CPU
 * per send in three 6 s runs back to back; the single node is steady after one).
 */
export async function measureMix(cluster: BenchCluster, what: string, requests: MixRequest[], settings: BenchSettings, connections: number, log: (line: string) => void): Promise<{ phase: LoadPhase; answered: number }> {
  let answered = 0;
  const warmup = settings.warmupSeconds * cluster.size;
  if (warmup > 0) {
    log(`${cluster.size} node(s): warming up ${what} (${warmup}s)`);
    answered += (await runWrkMix({ origin: cluster.lb, requests, connections, seconds: warmup })).requests;
  }
  log(`${cluster.size} node(s): measuring ${what} through the balancer (${settings.seconds}s, ${connections} connections)`);
  const cpu = new ClusterCpu(cluster);
  const before = await scrapeAll(cluster);
  cpu.start();
  const wrk = await runWrkMix({ origin: cluster.lb, requests, connections, seconds: settings.seconds });
  const used = cpu.read();
  const calls = callsBetween(before, await scrapeAll(cluster));
  answered += wrk.requests;
  const perOp = (s: number): string => `${((s / wrk.requests) * 1e6).toFixed(0)} µs`;
  log(
    `  ${Math.round(wrk.requestsPerSecond)} req/s, p50 ${wrk.latencyMs.p50.toFixed(2)} ms, p99 ${wrk.latencyMs.p99.toFixed(2)} ms; CPU per request: nodes ${perOp(used.nodes.reduce((a, b) => a + b, 0))} (${used.nodes.map((s) => `${Math.round((s / used.seconds) * 100)}%`).join(' + ')} of a core), haproxy ${perOp(used.haproxy)}, redis ${perOp(used.redis)}${cluster.cassandra ? `, cassandra ${perOp(used.cassandra)} (net of idle ${perOp(used.cassandraNet)})` : ''}; operations local ${calls.local}, forwarded ${calls.forwarded}, retried ${calls.retried}; ${busy(used)}`,
  );
  if (calls.unavailable > 0) throw new BenchError(`${what}: ${calls.unavailable} conversation operations ended in a 503 under load`);
  return { phase: { wrk, cpu: used, calls }, answered };
}

/** Sends through the balancer; checks afterwards that the store holds what wrk was answered for. */
export async function sendPhase(cluster: BenchCluster, api: Api, conversations: Conversation[], settings: BenchSettings, connections: number, log: (line: string) => void): Promise<LoadPhase> {
  const requests = sendRequests(api, conversations);
  const before = await storedMessages(api, conversations);
  const { phase, answered } = await measureMix(cluster, 'sends', requests, settings, connections, log);
  const stored = (await storedMessages(api, conversations)) - before;
  // wrk counts the answers it read; requests in flight when it stopped may have been stored too.
  const runs = settings.warmupSeconds > 0 ? 2 : 1;
  if (stored < answered || stored > answered + connections * runs) {
    throw new BenchError(`cluster of ${cluster.size}: wrk was answered for ${answered} sends but the store holds ${stored} new messages`);
  }
  return phase;
}

/** History pages through the balancer, once every conversation holds at least a page. */
export async function historyPhase(cluster: BenchCluster, api: Api, conversations: Conversation[], settings: BenchSettings, connections: number, log: (line: string) => void): Promise<LoadPhase & { pageBytes: number }> {
  const counts = await messageCounts(api, conversations);
  const missing = conversations.flatMap((c, i) => Array.from({ length: Math.max(0, PAGE - counts[i]!) }, (_, k) => ({ c, k, i })));
  if (missing.length > 0) {
    log(`topping up ${missing.length} messages so that every conversation has ${PAGE}`);
    await inParallel(missing, 32, ({ c, k, i }) => expectOk(api, 'POST', `${BASE}/conversations/${c.id}/messages`, JSON.parse(sendBody(c.members[k % c.members.length]!, `c${i}`))));
  }
  const reads: MixRequest[] = conversations.map((c) => ({ method: 'GET', path: `${BASE}/conversations/${c.id}/messages?limit=${PAGE}`, headers: api.headers }));
  const sample = await fetch(cluster.lb + reads[0]!.path, { headers: api.headers, signal: AbortSignal.timeout(10_000) });
  const bytes = Buffer.from(await sample.arrayBuffer());
  if (sample.status !== 200 || (JSON.parse(bytes.toString('utf8')) as { items: unknown[] }).items.length !== PAGE) throw new BenchError(`GET ${reads[0]!.path} did not answer a page of ${PAGE}`);
  const { phase } = await measureMix(cluster, 'history pages', reads, settings, connections, log);
  return { ...phase, pageBytes: bytes.length };
}
