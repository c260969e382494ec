/**
 * The `groupchat` bench's sender, run as its own process by bench/lib/posters.ts (pinned to the
 * load CPU): `node --import tsx bench/lib/post-worker.ts`, driven over IPC.
 *
 * Open loop on raw sockets: message `seq` is due at t0 + (seq - fromSeq) / rate whatever the
 * earlier ones did, goes to conversation groupOf(seq) from its member senderOf(seq)
 * (groupchat-plan.ts) with that member's own user token, and carries the marker
 * `~F<seq>.<due time µs>~` the SSE receivers scan for, so delivery latency counts from the
 * scheduled send (no coordinated omission). HTTP/1.1 keep-alive over `net` sockets, one request
 * at a time per connection as a browser does (no pipelining): a request due while every
 * connection is busy goes on a new one, up to the pool's cap, and past it waits for the first
 * free one (the wait counts in its latency). Responses are parsed just enough to count them and
 * their status (uWS answers with Content-Length). No http.Agent, no streams machinery: the
 * generator must cost far less than the node it loads.
 *
 * Commands (parent -> worker) and answers are the `PostCommand` / `PostAnswer` types of
 * posters.ts.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { serveCommands } from './ipc-serve.ts';
import { groupOf, marker, senderOf, type GroupchatPlan } from './groupchat-plan.ts';
import type { PostAnswer, PostCommand, PostInit, PostReport } from './posters.ts';

interface Outstanding {
  seq: number;
  due: number;
}

interface Conn {
  sock: net.Socket;
  /** The request written and not answered yet: one at a time, never pipelined. */
  pending: Outstanding | null;
  buf: Buffer | null;
  lastUsed: number;
}

let init: PostInit;
let plan: GroupchatPlan;
/** Per (group, member): the request head without Content-Length and body. */
let heads: string[][] = [];
/** Every open connection, and the idle ones (most recently used last). */
const all = new Set<Conn>();
const idle: Conn[] = [];
/** Requests due while every connection was busy and the pool at its cap, oldest first. */
let backlog: Outstanding[] = [];
let backlogHead = 0;
let maxConnections = 0;
/** An idle connection older than this is closed rather than used: uWS closes idle ones after 10 s. */
const STALE_MS = 5000;
const HEAD_END = Buffer.from('\r\n\r\n');

// ---- the phase in progress ----
let answered = 0;
let expectedAnswers = 0;
let statuses: Record<string, number> = {};
let latencies = new Float64Array(0);
let lags = new Float64Array(0);
let firstError: string | null = null;
let errors = 0;
let onAllAnswered: (() => void) | null = null;

const send = (a: PostAnswer): void => {
  process.send!(a);
};

const nowUs = (ms: number): number => Math.round((performance.timeOrigin + ms) * 1000);

function fail(message: string): void {
  errors++;
  firstError ??= message;
}

function bodyOf(seq: number, dueMs: number): string {
  const text = `${marker(seq, nowUs(dueMs))} groupchat bench `;
  return `{"body":"${text}${init.padding.slice(0, Math.max(0, init.bodyBytes - text.length - 12))}"}`;
}

function onData(c: Conn, chunk: Buffer): void {
  const now = performance.now();
  const buf = c.buf === null ? chunk : Buffer.concat([c.buf, chunk]);
  const end = buf.indexOf(HEAD_END);
  if (end === -1) {
    c.buf = buf;
    return;
  }
  const head = buf.toString('latin1', 0, end);
  const m = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (m === null) {
    fail(`a response without Content-Length: ${head.slice(0, 200)}`);
    c.sock.destroy();
    return;
  }
  const total = end + 4 + Number(m[1]);
  if (buf.length < total) {
    c.buf = buf;
    return;
  }
  if (buf.length > total) fail('bytes after a response no request asked for');
  c.buf = null;
  const o = c.pending;
  c.pending = null;
  c.lastUsed = now;
  if (o === null) return fail('a response to no request');
  const status = head.slice(9, 12);
  statuses[status] = (statuses[status] ?? 0) + 1;
  if (status !== '201' && firstError === null) firstError = `seq ${o.seq}: ${status} ${buf.toString('utf8', end + 4, Math.min(total, end + 404))}`;
  if (answered < latencies.length) latencies[answered] = now - o.due;
  answered++;
  if (answered === expectedAnswers && onAllAnswered) onAllAnswered();
  // The connection takes the oldest request waiting, else goes back to the idle ones.
  if (backlogHead < backlog.length) {
    write(c, backlog[backlogHead++]!);
    if (backlogHead === backlog.length) {
      backlog = [];
      backlogHead = 0;
    }
  } else idle.push(c);
}

/** Opens a connection; answers it at once (writes wait in the socket until it is connected). */
function open(): Conn {
  const sock = net.connect({ host: init.host, port: init.port });
  const c: Conn = { sock, pending: null, buf: null, lastUsed: performance.now() };
  all.add(c);
  sock.setNoDelay(true);
  sock.on('error', (err) => fail(`a connection: ${err.message}`));
  sock.on('data', (chunk: Buffer) => onData(c, chunk));
  sock.on('close', () => {
    all.delete(c);
    const at = idle.indexOf(c);
    if (at !== -1) idle.splice(at, 1);
    if (!closing && c.pending !== null) fail(`a connection closed by the server with a request unanswered (seq ${c.pending.seq})`);
  });
  return c;
}

function write(c: Conn, o: Outstanding): void {
  const g = groupOf(plan, o.seq);
  const m = senderOf(plan, o.seq);
  const body = bodyOf(o.seq, o.due);
  c.pending = o;
  c.sock.write(`${heads[g]![m]!}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/**
 * Request `seq`, due at `due`: on an idle connection (the most recently used that is not stale),
 * else on a new one while the pool is under its cap, else queued until a connection is free.
 * Never pipelined: a browser does not pipeline either.
 */
function post(seq: number, due: number): void {
  const now = performance.now();
  let c: Conn | undefined;
  while ((c = idle.pop()) !== undefined && now - c.lastUsed > STALE_MS) {
    all.delete(c);
    c.sock.destroy();
  }
  if (c === undefined && all.size < maxConnections) c = open();
  if (c === undefined) backlog.push({ seq, due });
  else write(c, { seq, due });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function run(fromSeq: number, rate: number, seconds: number, drainMs: number): Promise<PostReport> {
  const total = Math.round(rate * seconds);
  answered = 0;
  expectedAnswers = total;
  statuses = {};
  latencies = new Float64Array(total);
  lags = new Float64Array(total);
  errors = 0;
  firstError = null;
  const interval = 1000 / rate;
  const t0 = performance.now() + 2;
  let i = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      while (i < total) {
        const due = t0 + i * interval;
        if (due > now) break;
        lags[i] = now - due;
        post(fromSeq + i, due);
        i++;
      }
      if (i >= total) return resolve();
      const wait = t0 + i * interval - performance.now();
      setTimeout(tick, Math.max(0, wait));
    };
    setTimeout(tick, 2);
  });
  const sendSeconds = (performance.now() - t0) / 1000;
  if (answered < expectedAnswers) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainMs);
      onAllAnswered = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    onAllAnswered = null;
  }
  const lat = latencies.slice(0, Math.min(answered, total)).sort();
  const lag = lags.slice(0, total).sort();
  return {
    scheduled: total,
    answered,
    sendSeconds,
    statuses,
    latencyMs: { p50: percentile(lat, 50), p99: percentile(lat, 99), max: lat.length ? lat[lat.length - 1]! : 0 },
    lagMs: { p50: percentile(lag, 50), p99: percentile(lag, 99), max: lag.length ? lag[lag.length - 1]! : 0 },
    errors,
    firstError,
  };
}

let closing = false;

serveCommands<PostCommand>(async (cmd) => {
  switch (cmd.cmd) {
    case 'init': {
      init = cmd.init;
      plan = init.plan;
      heads = init.conversations.map((cid, g) =>
        init.tokens[g]!.map((token) => `POST ${init.basePath}/conversations/${cid}/messages HTTP/1.1\r\nHost: ${init.host}:${init.port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n`),
      );
      maxConnections = init.connections;
      send({ type: 'ready' });
      break;
    }
    case 'run':
      send({ type: 'report', report: await run(cmd.fromSeq, cmd.rate, cmd.seconds, cmd.drainMs) });
      break;
    case 'close':
      closing = true;
      for (const c of all) c.sock.destroy();
      send({ type: 'closed' });
      setTimeout(() => process.exit(0), 50);
      break;
  }
}, send);
