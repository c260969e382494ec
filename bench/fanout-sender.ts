/**
 * The fanout bench's sender: messages to one conversation at a steady rate, open loop, each text
 * carrying the marker the SSE clients scan for (bench/lib/sse-client-worker.ts).
 */
import { performance } from 'node:perf_hooks';
import { BenchError } from './lib/errors.ts';

export const BASE = '/api/v1/tenants/acme/applications/support';
/** The demo users of acme with access to `support`: the CHANNEL's members, and the receivers. */
export const USERS = ['alice', 'bob', 'carol', 'frank', 'grace'];

export interface Api {
  origin: string;
  headers: Record<string, string>;
}

export async function expectOk(api: Api, method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(api.origin + route, {
    method,
    headers: body === undefined ? api.headers : { ...api.headers, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new BenchError(`${method} ${route} answered ${res.status}, not 2xx:\n${text.slice(0, 2000)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const nowUs = (): number => Math.round((performance.timeOrigin + performance.now()) * 1000);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Sends messages `fromSeq`.. at `rate` per second for `seconds`, open loop: message i goes at
 * t0 + i / rate whatever the earlier ones did. Each text starts with the marker the clients scan
 * for (sse-client-worker.ts), stamped just before the request leaves. Resolves with the next seq
 * once every send was answered 201; throws on anything else.
 */
export async function sendSteady(api: Api, conversationId: string, fromSeq: number, rate: number, seconds: number): Promise<{ untilSeq: number; seconds: number; lagMsMax: number; postMs: { p50: number; max: number } }> {
  const total = Math.round(rate * seconds);
  const route = `${api.origin}${BASE}/conversations/${conversationId}/messages`;
  const headers = { ...api.headers, 'Content-Type': 'application/json' };
  const t0 = performance.now();
  const sends: Promise<void>[] = [];
  let lagMsMax = 0;
  const postMs: number[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait - 0.5);
    while (performance.now() < due) await new Promise((r) => setImmediate(r));
    lagMsMax = Math.max(lagMsMax, performance.now() - due);
    const seq = fromSeq + i;
    const body = JSON.stringify({ body: `~F${seq}.${nowUs()}~ fanout bench`, actor_user_id: USERS[seq % USERS.length] });
    const started = performance.now();
    sends.push(
      fetch(route, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) }).then(async (res) => {
        const text = await res.text();
        postMs.push(performance.now() - started);
        if (res.status !== 201) throw new BenchError(`fanout: send ${seq} answered ${res.status}, not 201: ${text.slice(0, 500)}`);
      }),
    );
  }
  const sentSeconds = (performance.now() - t0) / 1000;
  await Promise.all(sends);
  postMs.sort((a, b) => a - b);
  return { untilSeq: fromSeq + total, seconds: sentSeconds, lagMsMax, postMs: { p50: postMs[Math.floor(postMs.length / 2)] ?? 0, max: postMs[postMs.length - 1] ?? 0 } };
}
