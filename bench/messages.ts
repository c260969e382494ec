/**
 * The `messages` scenario: sending and reading history through the chat node, each beside a bare
 * uWebSockets.js server answering the same number of bytes, in the same run.
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
 * (wrk: up to one per connection more, the requests still in flight when it stopped).
 */
import { buildNode, nodeEnv } from './lib/chat-node.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBare, type BareServer } from './lib/bare.ts';
import { summarize } from './lib/compare.ts';
import { BenchError } from './lib/errors.ts';
import { inParallel } from './lib/parallel.ts';
import { runFixedRate, type FixedRateReport } from './lib/fixed-rate.ts';
import { devMachineToken } from './lib/machine-token.ts';
import { freePort, onExit, startTsx, type ManagedProcess } from './lib/processes.ts';
import { goal, type BenchSettings, type Measurement, type Scenario } from './lib/scenario.ts';
import { runWrkMix, type MixRequest } from './lib/wrk-script.ts';
import type { WrkResult } from './lib/wrk.ts';

const BASE = '/api/v1/tenants/acme/applications/support';
/** The demo users of acme with access to `support`. */
const USERS = ['alice', 'bob', 'carol', 'frank', 'grace'];
const CONVERSATIONS = 200;
const MEMBERS_PER_CONVERSATION = 3;
const SEND_BODY_BYTES = 200;
const PAGE = 50;
const DEFAULT_CONNECTIONS = 64;
const OVERHEAD_SECONDS = 120;
const GOALS = { sendRatio: 0.35, halfRateP99Ms: 10, historyRatio: 0.5 };

/** A send body of exactly `SEND_BODY_BYTES` bytes on behalf of `actor`. */
export function sendBody(actor: string, tag: string): string {
  const skeleton = JSON.stringify({ body: `${tag} `, actor_user_id: actor });
  const pad = SEND_BODY_BYTES - Buffer.byteLength(skeleton);
  if (pad < 0) throw new BenchError(`send body for ${actor} is over ${SEND_BODY_BYTES} bytes`);
  const body = JSON.stringify({ body: `${tag} ${'lorem ipsum dolor sit amet '.repeat(10).slice(0, pad)}`, actor_user_id: actor });
  return body;
}

interface Api {
  origin: string;
  headers: Record<string, string>;
}

async function call(api: Api, method: string, route: string, body?: unknown): Promise<{ status: number; text: string; bytes: Buffer }> {
  const res = await fetch(api.origin + route, {
    method,
    headers: body === undefined ? api.headers : { ...api.headers, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, text: bytes.toString('utf8'), bytes };
}

async function expectOk(api: Api, method: string, route: string, body?: unknown): Promise<{ text: string; bytes: Buffer }> {
  const res = await call(api, method, route, body);
  if (res.status < 200 || res.status > 299) throw new BenchError(`${method} ${route} answered ${res.status}, not 2xx:\n${res.text.slice(0, 2000)}`);
  return res;
}

interface Conversation {
  id: string;
  members: string[];
}

/** The newest seq of each conversation (= messages sent to it: nothing is deleted here). */
async function lastSeqs(api: Api, conversations: Conversation[]): Promise<number[]> {
  return inParallel(conversations, 16, async (c) => {
    const page = JSON.parse((await expectOk(api, 'GET', `${BASE}/conversations/${c.id}/messages?limit=1`)).text) as { items: { seq: number }[] };
    return page.items[0]?.seq ?? 0;
  });
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Node and bare measured against each other: warm-up each, then rounds in alternating order. */
async function compareMix(
  pair: [{ name: string; origin: string }, { name: string; origin: string }],
  requests: MixRequest[],
  settings: BenchSettings,
  connections: number,
  log: (line: string) => void,
): Promise<{ measurements: Measurement[]; requestsTo: Record<string, number> }> {
  const requestsTo: Record<string, number> = {};
  const load = async (t: { name: string; origin: string }, seconds: number): Promise<WrkResult> => {
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
      const wrk = await load(t, settings.seconds);
      log(`  ${t.name}: ${Math.round(wrk.requestsPerSecond)} req/s, p50 ${wrk.latencyMs.p50.toFixed(2)} ms, p99 ${wrk.latencyMs.p99.toFixed(2)} ms`);
      measurements.push({ target: t.name, round, wrk });
    }
  }
  return { measurements, requestsTo };
}

export const scenario: Scenario = {
  name: 'messages',
  description: `sends (max rate, and latency at half of it, open loop) and history pages through the chat node, each vs a bare uWS server of the same answer size (goals: sends >= ${GOALS.sendRatio} x bare POST, p99 < ${GOALS.halfRateP99Ms} ms at half rate, history >= ${GOALS.historyRatio} x bare GET)`,
  async run(settings, log) {
    const connections = process.env.BENCH_CONNECTIONS ? settings.connections : DEFAULT_CONNECTIONS;
    const fixedWarmup = Math.min(2, Math.max(1, settings.warmupSeconds));
    const planned = 2 * (settings.warmupSeconds + settings.rounds * settings.seconds) * 2 + 2 * settings.rounds * (settings.seconds + fixedWarmup);

    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-messages-'));
    const removeDataDir = onExit(() => rmSync(dataDir, { recursive: true, force: true }));
    let node: ManagedProcess | undefined;
    let bare: BareServer | undefined;
    try {
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      buildNode(log);
      log(`starting the chat node on ${origin} (data in ${dataDir})`);
      node = await startTsx({ name: 'chat-node', file: 'dist/main.mjs', env: nodeEnv(port, dataDir), readyUrl: `${origin}/readyz`, timeoutMs: 60_000 });

      const access = await devMachineToken({ idpBaseUrl: `${origin}/idp`, clientId: 'acme-support-backend', clientSecret: 'acme-support-backend-secret' });
      const deadline = access.expiresAt ?? Date.now() + 3_600_000;
      if (Date.now() + (planned + OVERHEAD_SECONDS) * 1000 > deadline) {
        throw new BenchError(`messages: the machine token expires in ${Math.round((deadline - Date.now()) / 1000)}s, before the ~${planned + OVERHEAD_SECONDS}s run would end; lower BENCH_SECONDS or BENCH_ROUNDS`);
      }
      const auth = { Authorization: `Bearer ${access.token}` };
      const api: Api = { origin, headers: auth };

      // Conversations: GROUPs of three users, created by the machine (no actor: it lists every member).
      log(`creating ${CONVERSATIONS} GROUP conversations`);
      const conversations = await inParallel(Array.from({ length: CONVERSATIONS }, (_, i) => i), 16, async (i) => {
        const members = Array.from({ length: MEMBERS_PER_CONVERSATION }, (_, k) => USERS[(i + k) % USERS.length]!);
        const res = JSON.parse((await expectOk(api, 'POST', `${BASE}/conversations`, { type: 'GROUP', name: `bench ${i}`, member_user_ids: members })).text) as { conversation_id: string };
        return { id: res.conversation_id, members };
      });

      // (a) Sends at the maximum rate.
      const sends: MixRequest[] = conversations.flatMap((c, i) =>
        c.members.map((m) => ({ method: 'POST', path: `${BASE}/conversations/${c.id}/messages`, headers: { ...auth, 'Content-Type': 'application/json' }, body: sendBody(m, `c${i}`) })),
      );
      const sample = await expectOk(api, 'POST', sends[0]!.path, sends[0]!.body);
      log(`a send answers ${sample.bytes.length} bytes; starting the bare server answering as many`);
      bare = await startBare('bare-post', sample.bytes);
      const bareOrigin = bare.baseUrl;
      const barePost = await fetch(bareOrigin + sends[0]!.path, { method: 'POST', headers: sends[0]!.headers, body: sends[0]!.body });
      if (barePost.status !== 200 || Buffer.from(await barePost.arrayBuffer()).length !== sample.bytes.length) throw new BenchError('messages: the bare server does not answer the POST with the same size');

      const before = sum(await lastSeqs(api, conversations));
      const a = await compareMix([{ name: 'send', origin }, { name: 'bare_post', origin: bareOrigin }], sends, settings, connections, log);
      const afterA = sum(await lastSeqs(api, conversations));
      const answeredA = a.requestsTo.send ?? 0;
      // wrk counts the answers it read; requests still in flight when it stopped may have been stored too.
      const wrkRuns = settings.rounds + (settings.warmupSeconds > 0 ? 1 : 0);
      if (afterA - before < answeredA || afterA - before > answeredA + connections * wrkRuns) {
        throw new BenchError(`messages: wrk was answered for ${answeredA} sends but the store holds ${afterA - before} new messages`);
      }
      const sendSummary = summarize(a.measurements, 'send');
      const barePostSummary = summarize(a.measurements, 'bare_post');

      // (b) Latency at half of the maximum send rate, open loop.
      const rate = Math.max(1, Math.round(sendSummary.requestsPerSecond / 2));
      const fixedMeasurements: Measurement[] = [];
      const reports: Record<string, FixedRateReport[]> = { send_half_rate: [], bare_post_half_rate: [] };
      const pairB = [{ name: 'send_half_rate', origin }, { name: 'bare_post_half_rate', origin: bareOrigin }];
      let fixedToNode = 0;
      for (let round = 1; round <= settings.rounds; round += 1) {
        for (const t of round % 2 === 1 ? pairB : [pairB[1]!, pairB[0]!]) {
          log(`measuring ${t.name}, round ${round}/${settings.rounds} (${rate} req/s fixed, ${settings.seconds}s after ${fixedWarmup}s unrecorded)`);
          const r = await runFixedRate({ origin: t.origin, requests: sends, rate, seconds: settings.seconds, warmupSeconds: fixedWarmup, connections, seed: round });
          log(`  ${t.name}: ${Math.round(r.report.requestsPerSecond)} req/s, p50 ${r.report.latencyMs.p50.toFixed(2)} ms, p99 ${r.report.latencyMs.p99.toFixed(2)} ms, max ${r.report.latencyMs.max.toFixed(2)} ms (generator lag p99 ${r.report.lagMs.p99.toFixed(2)} ms)`);
          fixedMeasurements.push({ target: t.name, round, wrk: r.wrk });
          reports[t.name]!.push(r.report);
          if (t.name === 'send_half_rate') fixedToNode += r.report.completed + Math.round(rate * fixedWarmup);
        }
      }
      const afterB = sum(await lastSeqs(api, conversations));
      if (afterB - afterA !== fixedToNode) {
        throw new BenchError(`messages: the fixed-rate runs were answered 2xx for ${fixedToNode} sends but the store holds ${afterB - afterA} new messages`);
      }
      await bare.process.stop();
      bare = undefined;

      // (c) History pages: every conversation first gets at least PAGE messages.
      const seqs = await lastSeqs(api, conversations);
      const missing = conversations.flatMap((c, i) => Array.from({ length: Math.max(0, PAGE - seqs[i]!) }, (_, k) => ({ c, k, i })));
      if (missing.length > 0) {
        log(`topping up ${missing.length} messages so that every conversation has ${PAGE}`);
        await inParallel(missing, 32, ({ c, k, i }) => expectOk(api, 'POST', `${BASE}/conversations/${c.id}/messages`, sendBody(c.members[k % c.members.length]!, `c${i}`)));
      }
      const reads: MixRequest[] = conversations.map((c) => ({ method: 'GET', path: `${BASE}/conversations/${c.id}/messages?limit=${PAGE}`, headers: auth }));
      const pages = await inParallel(reads, 16, async (r) => {
        const res = await expectOk(api, 'GET', r.path);
        const items = (JSON.parse(res.text) as { items: unknown[] }).items;
        if (items.length !== PAGE) throw new BenchError(`messages: ${r.path} answered ${items.length} messages, not ${PAGE}`);
        return res.bytes;
      });
      const meanPage = sum(pages.map((p) => p.length)) / pages.length;
      const page = pages.reduce((best, p) => (Math.abs(p.length - meanPage) < Math.abs(best.length - meanPage) ? p : best));
      log(`history pages answer ${Math.min(...pages.map((p) => p.length))}-${Math.max(...pages.map((p) => p.length))} bytes; the bare server answers ${page.length}`);
      bare = await startBare('bare-get', page);
      const c = await compareMix([{ name: 'history', origin }, { name: 'bare_get', origin: bare.baseUrl }], reads, settings, connections, log);
      const historySummary = summarize(c.measurements, 'history');
      const bareGetSummary = summarize(c.measurements, 'bare_get');

      const halfNode = summarize(fixedMeasurements, 'send_half_rate');
      const halfBare = summarize(fixedMeasurements, 'bare_post_half_rate');
      const maxOf = (name: string): number => Math.max(...reports[name]!.map((r) => r.latencyMs.max));
      const figures: Record<string, number> = {
        conversations: CONVERSATIONS,
        connections,
        send_body_bytes: SEND_BODY_BYTES,
        send_response_bytes: sample.bytes.length,
        page_bytes: page.length,
        send_rps: Math.round(sendSummary.requestsPerSecond),
        send_p50_ms: round2(sendSummary.p50Ms),
        send_p99_ms: round2(sendSummary.p99Ms),
        bare_post_rps: Math.round(barePostSummary.requestsPerSecond),
        bare_post_p50_ms: round2(barePostSummary.p50Ms),
        bare_post_p99_ms: round2(barePostSummary.p99Ms),
        send_ratio: Math.round((sendSummary.requestsPerSecond / barePostSummary.requestsPerSecond) * 1000) / 1000,
        half_rate_rps: rate,
        half_rate_p50_ms: round2(halfNode.p50Ms),
        half_rate_p99_ms: round2(halfNode.p99Ms),
        half_rate_max_ms: round2(maxOf('send_half_rate')),
        bare_half_rate_p50_ms: round2(halfBare.p50Ms),
        bare_half_rate_p99_ms: round2(halfBare.p99Ms),
        bare_half_rate_max_ms: round2(maxOf('bare_post_half_rate')),
        generator_lag_p99_ms: round2(Math.max(...Object.values(reports).flat().map((r) => r.lagMs.p99))),
        history_rps: Math.round(historySummary.requestsPerSecond),
        history_p50_ms: round2(historySummary.p50Ms),
        history_p99_ms: round2(historySummary.p99Ms),
        bare_get_rps: Math.round(bareGetSummary.requestsPerSecond),
        bare_get_p50_ms: round2(bareGetSummary.p50Ms),
        bare_get_p99_ms: round2(bareGetSummary.p99Ms),
        history_ratio: Math.round((historySummary.requestsPerSecond / bareGetSummary.requestsPerSecond) * 1000) / 1000,
        messages_stored: sum(await lastSeqs(api, conversations)),
      };
      return {
        measurements: [...a.measurements, ...fixedMeasurements, ...c.measurements],
        figures,
        goals: [
          goal('send_ratio', figures.send_ratio!, '>=', GOALS.sendRatio),
          goal('half_rate_p99_ms', figures.half_rate_p99_ms!, '<=', GOALS.halfRateP99Ms),
          goal('history_ratio', figures.history_ratio!, '>=', GOALS.historyRatio),
        ],
        notes: [
          `send_ratio = send req/s / bare POST req/s (wrk -t1 -c${connections}, a random conversation of ${CONVERSATIONS} and a random member per request, ${SEND_BODY_BYTES}-byte body, sent by a machine on behalf of the member)`,
          `half_rate_*: open-loop fixed rate at half of send_rps, latency from the scheduled start (p50/p99: mean of rounds; max: worst round); bare_half_rate_* is the same generator against the bare server, the floor of the method`,
          `history_ratio = history req/s / bare GET req/s (GET ?limit=${PAGE} of a random conversation; the bare server answers a ${page.length}-byte page)`,
          `on ${os.availableParallelism()} CPUs; every send the generators were answered for is in the store (checked by seq)`,
        ],
      };
    } finally {
      await Promise.all([node?.stop(), bare?.process.stop()]);
      removeDataDir();
    }
  },
};
