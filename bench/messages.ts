/**
 * The `messages` scenario: sending and reading history through the chat node, each beside a bare
 * uWebSockets.js server answering the same number of bytes, in the same run; on SQLite, on
 * Cassandra, or on both one after the other (`--stores sqlite,cassandra`, bench/lib/stores.ts).
 *
 * On Cassandra the node gets a fresh keyspace of the bench's own server (bench/lib/cassandra.ts:
 * one node, replication factor 1, 512 MB heap, data on tmpfs, pinned to the node's CPU and
 * stopped after the run), and the JVM's CPU per send is measured beside the node's, also net of
 * what the JVM burns idle. SQLite runs first, before the JVM starts.
 *
 * A real node (the esbuild bundle, as `npm start` runs it; embedded IdP; temp data dir; rate limits
 * raised out of reach; no CHAT_* setting inherited) gets CONVERSATIONS GROUP conversations of three
 * demo users each, created by the machine client acme-support-backend. Then:
 *
 *  (a) sends at the maximum rate: wrk, BENCH_CONNECTIONS connections (64 unless set), each request
 *      a POST .../conversations/{id}/messages of a random conversation, on behalf of a random
 *      member of it (`actor_user_id`), with a 200-byte JSON body; beside it the bare server
 *      answering the same POSTs with as many bytes as the node's 201. Goal: node >= 0.35 x bare.
 *  (b) send latency at half of the rate (a) measured: an open-loop fixed-rate generator
 *      (bench/lib/fixed-rate.ts; latency from each request's scheduled start, no coordinated
 *      omission), the same against the bare server as the floor of the method. Goal: p99 < 10 ms.
 *  (c) history pages: GET .../messages?limit=50 of a random conversation (every one holds >= 50
 *      messages by then; topped up if not), beside the bare server answering a page of the same
 *      size. Goal: node >= 0.5 x bare.
 *
 * Non-2xx answers and socket errors discard a run (the wrk and fixed-rate runners throw), and
 * after the send phases the store must hold exactly the messages the generators were answered for
 * (wrk: up to one per connection more, the requests still in flight when it stopped), counted by
 * paging every conversation's history (Cassandra's seqs may have gaps: see messageCounts).
 *
 * CPU per send (node, and Cassandra when it is the store) comes from both send phases: at the
 * maximum rate (throughput per core) and at half of it (nearer a planned load).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { storeEnv } from '../cluster/lib/env.ts';
import { cpuSeconds } from './fanout-proc.ts';
import { startBare, type BareServer } from './lib/bare.ts';
import { cassandraStore, dropKeyspace, usingCassandra, type CassandraCpu, type MeasuredCassandra } from './lib/cassandra.ts';
import { buildNode, nodeEnv } from './lib/chat-node.ts';
import { summarize } from './lib/compare.ts';
import { BenchError } from './lib/errors.ts';
import { runFixedRate, type FixedRateReport } from './lib/fixed-rate.ts';
import { devMachineToken } from './lib/machine-token.ts';
import { BASE, call, CONVERSATIONS, createConversations, expectOk, messageCounts, sendBody, SEND_BODY_BYTES, sum, type Api, type Conversation } from './lib/messages-api.ts';
import { inParallel } from './lib/parallel.ts';
import { freePort, onExit, startTsx, type ManagedProcess } from './lib/processes.ts';
import { goal, type BenchSettings, type Measurement, type Scenario, type ScenarioResult } from './lib/scenario.ts';
import { mergeResults, parseStores, STORES_USAGE, underStore, type StoreKind } from './lib/stores.ts';
import { runWrkMix, type MixRequest } from './lib/wrk-script.ts';
import type { WrkResult } from './lib/wrk.ts';

const PAGE = 50;
const DEFAULT_CONNECTIONS = 64;
const OVERHEAD_SECONDS = 120;
/** A node on a fresh Cassandra keyspace creates its schema first: tens of seconds on a busy machine. */
const CASSANDRA_READY_MS = 180_000;
const GOALS = { sendRatio: 0.35, halfRateP99Ms: 10, historyRatio: 0.5 };

export { sendBody } from './lib/messages-api.ts';

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** CPU seconds a phase cost the serving side: the node, and the Cassandra JVMs when they are its store. */
interface ServerCpuUse {
  node: number;
  cassandraRaw: number;
  /** Net of what the JVMs burn idle over the phase. */
  cassandraNet: number;
}

const NO_CPU: ServerCpuUse = { node: 0, cassandraRaw: 0, cassandraNet: 0 };
const addCpu = (a: ServerCpuUse, b: ServerCpuUse): ServerCpuUse => ({ node: a.node + b.node, cassandraRaw: a.cassandraRaw + b.cassandraRaw, cassandraNet: a.cassandraNet + b.cassandraNet });

function cpuOf(pid: number): number {
  const c = cpuSeconds(pid);
  if (c.user < 0) throw new BenchError(`cannot read /proc/${pid}/stat`);
  return c.user + c.system;
}

/** Runs `work` and answers what it cost the node and its store's JVMs (/proc/<pid>/stat). */
async function metered<T>(nodePid: number, cassandra: CassandraCpu | null, work: () => Promise<T>): Promise<{ result: T; cpu: ServerCpuUse }> {
  const node0 = cpuOf(nodePid);
  cassandra?.start();
  const result = await work();
  const node = cpuOf(nodePid) - node0;
  const jvm = cassandra?.read();
  return { result, cpu: { node, cassandraRaw: jvm?.raw ?? 0, cassandraNet: jvm?.net ?? 0 } };
}

/** `node 123 µs, cassandra 456 µs (net 400)`, for the log: a run that fails later still told its costs. */
function cpuPerRequest(cpu: ServerCpuUse, requests: number, onCassandra: boolean): string {
  const us = (s: number): string => `${perSendUs(s, requests)} µs`;
  return `node ${us(cpu.node)}${onCassandra ? `, cassandra ${us(cpu.cassandraRaw)} (net of idle ${us(cpu.cassandraNet)})` : ''}`;
}

interface Target {
  name: string;
  origin: string;
  /** The node's pid, when the target is the node: its rounds are metered. */
  pid?: number;
}

/** Node and bare measured against each other: warm-up each, then rounds in alternating order. */
async function compareMix(
  pair: [Target, Target],
  requests: MixRequest[],
  settings: BenchSettings,
  connections: number,
  log: (line: string) => void,
  cassandra: CassandraCpu | null = null,
): Promise<{ measurements: Measurement[]; requestsTo: Record<string, number>; cpu: ServerCpuUse }> {
  const requestsTo: Record<string, number> = {};
  /** CPU of the metered target over its measured rounds. */
  let cpu = NO_CPU;
  const load = async (t: Target, seconds: number): Promise<WrkResult> => {
    const r = await runWrkMix({ origin: t.origin, requests, connections, seconds });
    requestsTo[t.name] = (requestsTo[t.name] ?? 0) + r.requests;
    return r;
  };
  if (settings.warmupSeconds > 0) {
    for (const t of pair) {
      log(`warming up ${t.name} (${settings.warmupSeconds}s)`);
      await load(t, settings.warmupSeconds);
    }
  }
  const measurements: Measurement[] = [];
  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const t of round % 2 === 1 ? pair : [pair[1], pair[0]]) {
      log(`measuring ${t.name}, round ${round}/${settings.rounds} (${settings.seconds}s, ${connections} connections)`);
      let wrk: WrkResult;
      let cpuNote = '';
      if (t.pid === undefined) wrk = await load(t, settings.seconds);
      else {
        const m = await metered(t.pid, cassandra, () => load(t, settings.seconds));
        wrk = m.result;
        cpu = addCpu(cpu, m.cpu);
        cpuNote = `; CPU per request: ${cpuPerRequest(m.cpu, wrk.requests, cassandra !== null)}`;
      }
      log(`  ${t.name}: ${Math.round(wrk.requestsPerSecond)} req/s, p50 ${wrk.latencyMs.p50.toFixed(2)} ms, p99 ${wrk.latencyMs.p99.toFixed(2)} ms${cpuNote}`);
      measurements.push({ target: t.name, round, wrk });
    }
  }
  return { measurements, requestsTo, cpu };
}

/** What one store's run works with: the node on it, the machine's token, the conversations. */
interface StoreRun {
  store: StoreKind;
  node: ManagedProcess;
  origin: string;
  api: Api;
  auth: Record<string, string>;
  conversations: Conversation[];
  /** The JVMs' CPU meter, when the store is Cassandra. */
  cassandra: CassandraCpu | null;
  settings: BenchSettings;
  connections: number;
  log: (line: string) => void;
}

/** Every (conversation, member) send, prebuilt for wrk and the fixed-rate generator. */
function sendRequests(r: StoreRun): MixRequest[] {
  const headers = { ...r.auth, 'Content-Type': 'application/json' };
  return r.conversations.flatMap((c, i) => c.members.map((m) => ({ method: 'POST', path: `${BASE}/conversations/${c.id}/messages`, headers, body: sendBody(m, `c${i}`) })));
}

const storedMessages = async (r: StoreRun): Promise<number> => sum(await messageCounts(r.api, r.conversations));

/** (a) Sends at the maximum rate, beside the bare server answering as many bytes; checks the store after. */
async function maxRateSends(r: StoreRun, sends: MixRequest[], bareOrigin: string) {
  const { settings, connections } = r;
  const before = await storedMessages(r);
  const a = await compareMix([{ name: 'send', origin: r.origin, pid: r.node.child.pid! }, { name: 'bare_post', origin: bareOrigin }], sends, settings, connections, r.log, r.cassandra);
  const stored = (await storedMessages(r)) - before;
  const answered = a.requestsTo.send ?? 0;
  // wrk counts the answers it read; requests still in flight when it stopped may have been stored too.
  const wrkRuns = settings.rounds + (settings.warmupSeconds > 0 ? 1 : 0);
  if (stored < answered || stored > answered + connections * wrkRuns) {
    throw new BenchError(`messages (${r.store}): wrk was answered for ${answered} sends but the store holds ${stored} new messages`);
  }
  const measuredSends = sum(a.measurements.filter((m) => m.target === 'send').map((m) => m.wrk.requests));
  return { ...a, measuredSends };
}

/** (b) Latency at half of the maximum send rate, open loop; every answered send must be stored. */
async function halfRateSends(r: StoreRun, sends: MixRequest[], bareOrigin: string, rate: number) {
  const { settings, connections } = r;
  const fixedWarmup = Math.min(2, Math.max(1, settings.warmupSeconds));
  const measurements: Measurement[] = [];
  const reports: Record<string, FixedRateReport[]> = { send_half_rate: [], bare_post_half_rate: [] };
  const pair: Target[] = [{ name: 'send_half_rate', origin: r.origin, pid: r.node.child.pid! }, { name: 'bare_post_half_rate', origin: bareOrigin }];
  const before = await storedMessages(r);
  let toNode = 0;
  let cpu = NO_CPU;
  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const t of round % 2 === 1 ? pair : [pair[1]!, pair[0]!]) {
      r.log(`measuring ${t.name}, round ${round}/${settings.rounds} (${rate} req/s fixed, ${settings.seconds}s after ${fixedWarmup}s unrecorded)`);
      const run = () => runFixedRate({ origin: t.origin, requests: sends, rate, seconds: settings.seconds, warmupSeconds: fixedWarmup, connections, seed: round });
      let result: Awaited<ReturnType<typeof run>>;
      if (t.pid === undefined) result = await run();
      else {
        const m = await metered(t.pid, r.cassandra, run);
        result = m.result;
        cpu = addCpu(cpu, m.cpu);
        toNode += result.report.completed + Math.round(rate * fixedWarmup);
      }
      const l = result.report.latencyMs;
      const cpuNote = t.pid === undefined ? '' : `; CPU per request: ${cpuPerRequest(cpu, toNode, r.cassandra !== null)} (rounds so far)`;
      r.log(`  ${t.name}: ${Math.round(result.report.requestsPerSecond)} req/s, p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms, max ${l.max.toFixed(2)} ms (generator lag p99 ${result.report.lagMs.p99.toFixed(2)} ms)${cpuNote}`);
      measurements.push({ target: t.name, round, wrk: result.wrk });
      reports[t.name]!.push(result.report);
    }
  }
  const stored = (await storedMessages(r)) - before;
  if (stored !== toNode) throw new BenchError(`messages (${r.store}): the fixed-rate runs were answered 2xx for ${toNode} sends but the store holds ${stored} new messages`);
  return { measurements, reports, cpu, toNode };
}

/** (c) History pages, once every conversation holds at least a page, beside the bare server answering one. */
async function historyPages(r: StoreRun) {
  const counts = await messageCounts(r.api, r.conversations);
  const missing = r.conversations.flatMap((c, i) => Array.from({ length: Math.max(0, PAGE - counts[i]!) }, (_, k) => ({ c, k, i })));
  if (missing.length > 0) {
    r.log(`topping up ${missing.length} messages so that every conversation has ${PAGE}`);
    await inParallel(missing, 32, ({ c, k, i }) => expectOk(r.api, 'POST', `${BASE}/conversations/${c.id}/messages`, sendBody(c.members[k % c.members.length]!, `c${i}`)));
  }
  const reads: MixRequest[] = r.conversations.map((c) => ({ method: 'GET', path: `${BASE}/conversations/${c.id}/messages?limit=${PAGE}`, headers: r.auth }));
  const pages = await inParallel(reads, 16, async (q) => {
    const res = await expectOk(r.api, 'GET', q.path);
    const items = (JSON.parse(res.text) as { items: unknown[] }).items;
    if (items.length !== PAGE) throw new BenchError(`messages: ${q.path} answered ${items.length} messages, not ${PAGE}`);
    return res.bytes;
  });
  const meanPage = sum(pages.map((p) => p.length)) / pages.length;
  const page = pages.reduce((best, p) => (Math.abs(p.length - meanPage) < Math.abs(best.length - meanPage) ? p : best));
  r.log(`history pages answer ${Math.min(...pages.map((p) => p.length))}-${Math.max(...pages.map((p) => p.length))} bytes; the bare server answers ${page.length}`);
  const bare = await startBare('bare-get', page);
  try {
    const c = await compareMix([{ name: 'history', origin: r.origin }, { name: 'bare_get', origin: bare.baseUrl }], reads, r.settings, r.connections, r.log);
    return { ...c, pageBytes: page.length };
  } catch (err) {
    // Error answers discard this phase, not the send figures measured and checked before it.
    if (!(err instanceof BenchError)) throw err;
    r.log(`history phase discarded: ${err.message}`);
    // wrk counts error answers but does not say which; the same load again, from here, does.
    const seen = await errorAnswers(r, reads, PROBE_SECONDS);
    r.log(`the same pages for ${PROBE_SECONDS} s from the bench: ${seen}`);
    return { discarded: `${err.message}; the same load again for ${PROBE_SECONDS} s: ${seen}`, pageBytes: page.length };
  } finally {
    await bare.process.stop();
  }
}

const PROBE_SECONDS = 5;

/**
 * The error answers of `requests` sent by `r.connections` lanes for `seconds`: statuses counted,
 * and the first body of each status, to say why a phase was discarded.
 */
async function errorAnswers(r: StoreRun, requests: MixRequest[], seconds: number): Promise<string> {
  const deadline = performance.now() + seconds * 1000;
  const statuses = new Map<number, { count: number; body: string }>();
  let answers = 0;
  const lane = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const q = requests[Math.floor(Math.random() * requests.length)]!;
      const res = await call(r.api, q.method, q.path).catch((e: unknown) => ({ status: -1, text: String(e) }));
      answers += 1;
      if (res.status >= 200 && res.status < 300) continue;
      const seen = statuses.get(res.status) ?? { count: 0, body: res.text.slice(0, 300) };
      seen.count += 1;
      statuses.set(res.status, seen);
    }
  };
  await Promise.all(Array.from({ length: r.connections }, lane));
  if (statuses.size === 0) return `${answers} answers, all 2xx`;
  return `${answers} answers; ${[...statuses].map(([status, s]) => `${s.count} x ${status === -1 ? 'no answer' : status} (first: ${s.body})`).join('; ')}`;
}

/** The node as `npm start` runs it, on SQLite in its data dir or on its own keyspace of the bench's Cassandra. */
async function startNode(store: StoreKind, dataDir: string, cassandra: MeasuredCassandra | null, log: (line: string) => void): Promise<{ node: ManagedProcess; origin: string }> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const storeSettings = cassandra ? storeEnv(cassandraStore(cassandra.server, keyspaceOf())) : {};
  log(`starting the chat node on ${origin} (${store}; data in ${dataDir}${cassandra ? `, keyspace ${keyspaceOf()}` : ''})`);
  const node = await startTsx({ name: 'chat-node', file: 'dist/main.mjs', env: { ...nodeEnv(port, dataDir), ...storeSettings }, readyUrl: `${origin}/readyz`, timeoutMs: cassandra ? CASSANDRA_READY_MS : 60_000 });
  return { node, origin };
}

/** A fresh keyspace per run keeps runs comparable; dropped after it. */
const keyspaceOf = (): string => `bench_messages_${process.pid}`;

/** The three phases against the node on one store; figures without the store's prefix. */
async function runStore(store: StoreKind, settings: BenchSettings, connections: number, log: (line: string) => void, cassandra: MeasuredCassandra | null): Promise<ScenarioResult> {
  const fixedWarmup = Math.min(2, Math.max(1, settings.warmupSeconds));
  const planned = 2 * (settings.warmupSeconds + settings.rounds * settings.seconds) * 2 + 2 * settings.rounds * (settings.seconds + fixedWarmup);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-messages-'));
  const removeDataDir = onExit(() => rmSync(dataDir, { recursive: true, force: true }));
  let node: ManagedProcess | undefined;
  let bare: BareServer | undefined;
  try {
    const started = await startNode(store, dataDir, cassandra, log);
    node = started.node;
    const { origin } = started;
    const access = await devMachineToken({ idpBaseUrl: `${origin}/idp`, clientId: 'acme-support-backend', clientSecret: 'acme-support-backend-secret' });
    const deadline = access.expiresAt ?? Date.now() + 3_600_000;
    if (Date.now() + (planned + OVERHEAD_SECONDS) * 1000 > deadline) {
      throw new BenchError(`messages: the machine token expires in ${Math.round((deadline - Date.now()) / 1000)}s, before the ~${planned + OVERHEAD_SECONDS}s run would end; lower BENCH_SECONDS or BENCH_ROUNDS`);
    }
    const auth = { Authorization: `Bearer ${access.token}` };
    const api: Api = { origin, headers: auth };
    log(`creating ${CONVERSATIONS} GROUP conversations`);
    const run: StoreRun = { store, node, origin, api, auth, conversations: await createConversations(api), cassandra: cassandra?.cpu ?? null, settings, connections, log };

    const sends = sendRequests(run);
    const sample = await expectOk(api, 'POST', sends[0]!.path, sends[0]!.body);
    log(`a send answers ${sample.bytes.length} bytes; starting the bare server answering as many`);
    bare = await startBare('bare-post', sample.bytes);
    const barePost = await fetch(bare.baseUrl + sends[0]!.path, { method: 'POST', headers: sends[0]!.headers, body: sends[0]!.body });
    if (barePost.status !== 200 || Buffer.from(await barePost.arrayBuffer()).length !== sample.bytes.length) throw new BenchError('messages: the bare server does not answer the POST with the same size');

    const a = await maxRateSends(run, sends, bare.baseUrl);
    const rate = Math.max(1, Math.round(summarize(a.measurements, 'send').requestsPerSecond / 2));
    const b = await halfRateSends(run, sends, bare.baseUrl, rate);
    await bare.process.stop();
    bare = undefined;
    const c = await historyPages(run);

    const figures = figuresOf({ a, b, c, rate, sendResponseBytes: sample.bytes.length, connections, cassandra: cassandra?.cpu ?? null });
    figures.messages_stored = await storedMessages(run);
    return {
      measurements: [...a.measurements, ...b.measurements, ...('discarded' in c ? [] : c.measurements)],
      figures,
      goals: [
        goal('send_ratio', figures.send_ratio!, '>=', GOALS.sendRatio),
        goal('half_rate_p99_ms', figures.half_rate_p99_ms!, '<=', GOALS.halfRateP99Ms),
        'discarded' in c ? goal('history_discarded', 1, '<=', 0) : goal('history_ratio', figures.history_ratio!, '>=', GOALS.historyRatio),
      ],
      notes: [...notesOf(store, connections, c.pageBytes), ...('discarded' in c ? [`history phase discarded: ${c.discarded}`] : [])],
    };
  } finally {
    await Promise.all([node?.stop(), bare?.process.stop()]);
    removeDataDir();
    if (cassandra) await dropKeyspace(cassandra.server, keyspaceOf()).catch((e: unknown) => log(`could not drop ${keyspaceOf()}: ${String(e)}`));
  }
}

type MaxRate = Awaited<ReturnType<typeof maxRateSends>>;
type HalfRate = Awaited<ReturnType<typeof halfRateSends>>;
type History = Awaited<ReturnType<typeof historyPages>>;

const perSendUs = (cpuSeconds: number, sends: number): number => (sends > 0 ? Math.round((cpuSeconds / sends) * 1e6) : 0);

function figuresOf(o: { a: MaxRate; b: HalfRate; c: History; rate: number; sendResponseBytes: number; connections: number; cassandra: CassandraCpu | null }): Record<string, number> {
  const { a, b, c } = o;
  const send = summarize(a.measurements, 'send');
  const barePost = summarize(a.measurements, 'bare_post');
  const halfNode = summarize(b.measurements, 'send_half_rate');
  const halfBare = summarize(b.measurements, 'bare_post_half_rate');
  const maxOf = (name: string): number => Math.max(...b.reports[name]!.map((r) => r.latencyMs.max));
  const figures: Record<string, number> = {
    conversations: CONVERSATIONS,
    connections: o.connections,
    send_body_bytes: SEND_BODY_BYTES,
    send_response_bytes: o.sendResponseBytes,
    page_bytes: c.pageBytes,
    send_rps: Math.round(send.requestsPerSecond),
    send_p50_ms: round2(send.p50Ms),
    send_p99_ms: round2(send.p99Ms),
    send_node_cpu_us: perSendUs(a.cpu.node, a.measuredSends),
    bare_post_rps: Math.round(barePost.requestsPerSecond),
    bare_post_p50_ms: round2(barePost.p50Ms),
    bare_post_p99_ms: round2(barePost.p99Ms),
    send_ratio: Math.round((send.requestsPerSecond / barePost.requestsPerSecond) * 1000) / 1000,
    half_rate_rps: o.rate,
    half_rate_p50_ms: round2(halfNode.p50Ms),
    half_rate_p99_ms: round2(halfNode.p99Ms),
    half_rate_max_ms: round2(maxOf('send_half_rate')),
    half_rate_node_cpu_us: perSendUs(b.cpu.node, b.toNode),
    bare_half_rate_p50_ms: round2(halfBare.p50Ms),
    bare_half_rate_p99_ms: round2(halfBare.p99Ms),
    bare_half_rate_max_ms: round2(maxOf('bare_post_half_rate')),
    generator_lag_p99_ms: round2(Math.max(...Object.values(b.reports).flat().map((r) => r.lagMs.p99))),
    ...historyFigures(c),
  };
  if (o.cassandra) {
    Object.assign(figures, {
      send_cassandra_cpu_us: perSendUs(a.cpu.cassandraRaw, a.measuredSends),
      send_cassandra_net_cpu_us: perSendUs(a.cpu.cassandraNet, a.measuredSends),
      half_rate_cassandra_cpu_us: perSendUs(b.cpu.cassandraRaw, b.toNode),
      half_rate_cassandra_net_cpu_us: perSendUs(b.cpu.cassandraNet, b.toNode),
      cassandra_idle_cores: Math.round(o.cassandra.idle * 1000) / 1000,
    });
  }
  return figures;
}

function historyFigures(c: History): Record<string, number> {
  if ('discarded' in c) return { history_discarded: 1 };
  const history = summarize(c.measurements, 'history');
  const bareGet = summarize(c.measurements, 'bare_get');
  return {
    history_rps: Math.round(history.requestsPerSecond),
    history_p50_ms: round2(history.p50Ms),
    history_p99_ms: round2(history.p99Ms),
    bare_get_rps: Math.round(bareGet.requestsPerSecond),
    bare_get_p50_ms: round2(bareGet.p50Ms),
    bare_get_p99_ms: round2(bareGet.p99Ms),
    history_ratio: Math.round((history.requestsPerSecond / bareGet.requestsPerSecond) * 1000) / 1000,
  };
}

function notesOf(store: StoreKind, connections: number, pageBytes: number): string[] {
  return [
    `send_ratio = send req/s / bare POST req/s (wrk -t1 -c${connections}, a random conversation of ${CONVERSATIONS} and a random member per request, ${SEND_BODY_BYTES}-byte body, sent by a machine on behalf of the member)`,
    `half_rate_*: open-loop fixed rate at half of send_rps, latency from the scheduled start (p50/p99: mean of rounds; max: worst round); bare_half_rate_* is the same generator against the bare server, the floor of the method`,
    `*_node_cpu_us: the node's CPU (user + system, /proc) per send over the measured rounds (send_: at the maximum rate; half_rate_: at half of it, its unrecorded first seconds included)`,
    ...(store === 'cassandra'
      ? [`*_cassandra_cpu_us: the Cassandra JVM's CPU per send over the same rounds; *_net_*: less what it burns idle (cassandra_idle_cores, measured before the load) over their length; one node, replication factor 1, pinned beside the node`]
      : []),
    `history_ratio = history req/s / bare GET req/s (GET ?limit=${PAGE} of a random conversation; the bare server answers a ${pageBytes}-byte page)`,
    `on ${os.availableParallelism()} CPUs; every send the generators were answered for is in the store (counted by paging every conversation's history)`,
  ];
}

export const scenario: Scenario = {
  name: 'messages',
  description: `sends (max rate, and latency at half of it, open loop) and history pages through the chat node, each vs a bare uWS server of the same answer size, on each store asked for (goals: sends >= ${GOALS.sendRatio} x bare POST, p99 < ${GOALS.halfRateP99Ms} ms at half rate, history >= ${GOALS.historyRatio} x bare GET)`,
  usage: STORES_USAGE,
  async run(settings, log, args) {
    const stores = parseStores('messages', args);
    const connections = process.env.BENCH_CONNECTIONS ? settings.connections : DEFAULT_CONNECTIONS;
    buildNode(log);
    const results: ScenarioResult[] = [];
    const storeLog = (store: StoreKind) => (line: string): void => log(`${store} store: ${line}`);
    // SQLite first, before any JVM runs beside the node: its figures are those of a node alone.
    if (stores.includes('sqlite')) results.push(underStore('sqlite', stores, await runStore('sqlite', settings, connections, storeLog('sqlite'), null)));
    if (stores.includes('cassandra')) {
      const result = await usingCassandra(log, (c) => runStore('cassandra', settings, connections, storeLog('cassandra'), c));
      results.push(underStore('cassandra', stores, result));
    }
    return mergeResults(results);
  },
};
