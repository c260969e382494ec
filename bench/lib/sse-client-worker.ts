/**
 * A lean SSE client for many connections, run as its own process by bench/lib/sse-clients.ts
 * (pinned to the load CPU): `node --import tsx bench/lib/sse-client-worker.ts`, driven over IPC.
 *
 * An EventSource per connection costs far too much CPU and memory for 10,000 streams on one core,
 * so each connection is a raw `net` socket that sends the GET and then only scans the bytes it
 * receives for the markers the sender put into each message's text:
 *
 *   ~F<seq>.<send time, epoch µs>~
 *
 * (a marker never spans the chunked-encoding framing: uWS writes an event's `data:` line in one
 * chunk; a marker split between two TCP reads is joined with the connection's carried tail). For
 * each marker: latency = receive time − send time (same machine clock), and one bit per
 * (connection, message) of the phase, so every lost or duplicated event shows. Order is not
 * checked: the sender's requests overlap, so the node may store them in another order than their
 * seqs (the channel's own order is the store's).
 *
 * Commands (parent → worker) and answers (worker → parent) are the `Command` and `Answer` types
 * of sse-clients.ts.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { serveCommands } from './ipc-serve.ts';
import type { Answer, Command, PhaseReport } from './sse-clients.ts';

/** Latency histogram: 20 µs buckets up to 30 s; beyond that only the max is exact. */
const BUCKET_US = 20;
const BUCKETS = 1_500_000;

/** `~` is in no base64url id, UUID, number or JSON escape: a marker cannot start anywhere else. */
const MARK = '~F';
const END = '~';
/** Longest marker, so a carried tail (a marker cut by a TCP read) never needs to be longer. */
const CARRY = 40;

interface Conn {
  sock: net.Socket;
  /** The response began with status 200. */
  headOk: boolean;
  ready: boolean;
  /** The start of a marker cut by the previous read (latin1), else ''. */
  carry: string;
}

let conns: Conn[] = [];
let received = new Int32Array(0);
/** Groups mode: the group of each connection (null: every connection gets every message). */
let connGroups: Int32Array | null = null;
/** Groups mode: the group of each message of the phase, and how many each connection must get. */
let seqGroups: Int32Array | null = null;
let expectedOf = new Int32Array(0);
let misdelivered = 0;
let closedByServer = 0;
let errors = 0;
let firstError: string | null = null;

let hist = new Uint32Array(BUCKETS);
let count = 0;
let sumUs = 0;
let maxUs = 0;
let minUs = Number.POSITIVE_INFINITY;
/** The phase's seqs [phaseFrom, phaseFrom + phaseCount): one bit per (connection, seq) seen. */
let phaseFrom = 0;
let phaseCount = 0;
let phaseBytes = 0;
let seen = new Uint8Array(0);
/** Seqs outside the phase (late events of an earlier phase), and events seen twice on a connection. */
let strays = 0;
let duplicates = 0;
let phaseStart = 0;

const send = (a: Answer): void => {
  process.send!(a);
};

/** Every socket reads into this one buffer (net's `onread`): no stream machinery, no allocation per read. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);
const TILDE = 0x7e;
const LETTER_F = 0x46;
const DOT = 0x2e;

/** The fast path: a read of a live stream with nothing carried, scanned as bytes. */
function onRead(i: number, c: Conn, n: number): void {
  const nowUs = (performance.timeOrigin + performance.now()) * 1000;
  const view = READ_BUFFER.subarray(0, n);
  if (!c.ready || c.carry !== '') {
    onText(i, c, c.carry + view.toString('latin1'), nowUs);
    return;
  }
  let p = 0;
  while (p < n) {
    const at = view.indexOf(TILDE, p);
    if (at === -1) break;
    let q = at + 1;
    if (q < n && view[q] !== LETTER_F) {
      p = q;
      continue;
    }
    q++;
    let seq = 0;
    let us = 0;
    let digits = 0;
    for (; q < n && view[q]! >= 0x30 && view[q]! <= 0x39; q++, digits++) seq = seq * 10 + view[q]! - 0x30;
    if (q < n && (view[q] !== DOT || digits === 0)) {
      p = at + 1;
      continue;
    }
    q++;
    digits = 0;
    for (; q < n && view[q]! >= 0x30 && view[q]! <= 0x39; q++, digits++) us = us * 10 + view[q]! - 0x30;
    if (q >= n) {
      // Cut by the read: carry it (it is short) to the next one.
      c.carry = view.toString('latin1', at, n);
      return;
    }
    if (view[q] !== TILDE || digits === 0) {
      p = at + 1;
      continue;
    }
    record(i, seq, nowUs - us);
    p = q + 1;
  }
}

/** The general path, as text: the response head and `ready`, and a read that begins with a carried marker start. */
function onText(i: number, c: Conn, s: string, nowUs: number): void {
  if (!c.ready) {
    if (!c.headOk) {
      if (s.length < 12) {
        c.carry = s;
        return;
      }
      if (!s.startsWith('HTTP/1.1 200')) {
        fail(`connection ${i}: ${s.slice(0, 200).replace(/\r?\n/g, ' | ')}`);
        c.sock.destroy();
        return;
      }
      c.headOk = true;
    }
    if (!s.includes('event: ready')) {
      c.carry = s.slice(-16); // `event: ready` may be cut by the read
      return;
    }
    c.ready = true;
    readyCount++;
    if (readyCount + failedCount === wanted) connectDone();
  }
  let from = 0;
  for (;;) {
    const at = s.indexOf(MARK, from);
    if (at === -1) {
      // A marker may begin with the last character ('~').
      c.carry = s.endsWith('~') ? '~' : '';
      return;
    }
    const dot = s.indexOf('.', at + 2);
    const end = dot === -1 ? -1 : s.indexOf(END, dot + 1);
    if (end === -1 || end - at > CARRY) {
      if (s.length - at < CARRY) {
        // Cut by the read: carry it (it is short) to the next chunk.
        c.carry = s.slice(at);
        return;
      }
      from = at + 2; // not one of ours after all
      continue;
    }
    const seq = Number(s.slice(at + 2, dot));
    const sentUs = Number(s.slice(dot + 1, end));
    from = end + 1;
    if (Number.isInteger(seq) && Number.isFinite(sentUs)) record(i, seq, nowUs - sentUs);
  }
}

function record(i: number, seq: number, latencyUs: number): void {
  const k = seq - phaseFrom;
  if (k < 0 || k >= phaseCount) {
    strays++;
    return;
  }
  if (seqGroups !== null && connGroups !== null && seqGroups[k] !== connGroups[i]) {
    misdelivered++;
    return;
  }
  const byte = i * phaseBytes + (k >> 3);
  const bit = 1 << (k & 7);
  if ((seen[byte]! & bit) !== 0) {
    duplicates++;
    return;
  }
  seen[byte] = seen[byte]! | bit;
  received[i] = received[i]! + 1;
  const us = latencyUs < 0 ? 0 : latencyUs;
  count++;
  sumUs += us;
  if (us > maxUs) maxUs = us;
  if (us < minUs) minUs = us;
  const b = Math.min(BUCKETS - 1, Math.floor(us / BUCKET_US));
  hist[b] = hist[b]! + 1;
}

function fail(message: string): void {
  errors++;
  firstError ??= message;
}

// ---- connecting ----------------------------------------------------------------------------

let wanted = 0;
let readyCount = 0;
let failedCount = 0;
let connectStarted = 0;
let connectDone: () => void = () => undefined;

function open(i: number, host: string, port: number, path: string): void {
  const c = { headOk: false, ready: false, carry: '' } as Conn;
  const sock = net.connect({ host, port, onread: { buffer: READ_BUFFER, callback: (n: number) => (onRead(i, c, n), true) } });
  c.sock = sock;
  conns[i] = c;
  sock.setNoDelay(true);
  sock.once('connect', () => {
    sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  });
  sock.on('error', (err) => fail(`connection ${i}: ${err.message}`));
  sock.once('close', () => {
    if (!c.ready) {
      failedCount++;
      if (readyCount + failedCount === wanted) connectDone();
    } else if (!closing) {
      closedByServer++;
    }
    c.ready = false;
  });
}

async function connectAll(host: string, port: number, paths: string[], connections: number, concurrency: number, groups: number[] | undefined): Promise<void> {
  wanted = connections;
  connGroups = groups === undefined ? null : Int32Array.from(groups);
  conns = new Array<Conn>(connections);
  received = new Int32Array(connections);
  connectStarted = performance.now();
  const all = new Promise<void>((resolve) => (connectDone = resolve));
  let opened = 0;
  // At most `concurrency` connections between connect and `ready`, so the node's accept queue is never overrun.
  await new Promise<void>((resolve) => {
    const pump = (): void => {
      while (opened < connections && opened - readyCount - failedCount < concurrency) {
        open(opened, host, port, paths[opened % paths.length]!);
        opened++;
      }
      if (opened >= connections) resolve();
      else setTimeout(pump, 5);
    };
    pump();
  });
  await all;
}

// ---- phases --------------------------------------------------------------------------------

function resetPhase(fromSeq: number, messages: number, groups: number[] | undefined): void {
  hist = new Uint32Array(BUCKETS);
  count = 0;
  sumUs = 0;
  maxUs = 0;
  minUs = Number.POSITIVE_INFINITY;
  strays = 0;
  duplicates = 0;
  misdelivered = 0;
  received.fill(0);
  seqGroups = groups === undefined || connGroups === null ? null : Int32Array.from(groups);
  expectedOf = new Int32Array(conns.length).fill(messages);
  if (seqGroups !== null && connGroups !== null) {
    const perGroup = new Map<number, number>();
    for (const g of seqGroups) perGroup.set(g, (perGroup.get(g) ?? 0) + 1);
    for (let i = 0; i < conns.length; i++) expectedOf[i] = perGroup.get(connGroups[i]!) ?? 0;
  }
  phaseFrom = fromSeq;
  phaseCount = messages;
  phaseBytes = (messages + 7) >> 3;
  seen = new Uint8Array(conns.length * phaseBytes);
  phaseStart = performance.now();
}

function percentileMs(p: number): number {
  if (count === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * count));
  let seen = 0;
  for (let b = 0; b < BUCKETS; b++) {
    seen += hist[b]!;
    if (seen >= rank) return Math.min(maxUs, (b + 1) * BUCKET_US) / 1000;
  }
  return maxUs / 1000;
}

/** Waits until every open connection has every message of the phase, or `timeoutMs`. */
async function drain(timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let behind = false;
    for (let i = 0; i < conns.length; i++) {
      if (conns[i]!.ready && received[i]! < expectedOf[i]!) {
        behind = true;
        break;
      }
    }
    if (!behind || performance.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function report(sendSeconds: number): PhaseReport {
  let open = 0;
  let short = 0;
  let missing = 0;
  let expected = 0;
  for (let i = 0; i < conns.length; i++) {
    const c = conns[i]!;
    if (!c.ready) continue;
    open++;
    expected += expectedOf[i]!;
    const lack = expectedOf[i]! - received[i]!;
    if (lack > 0) {
      short++;
      missing += lack;
    }
  }
  return {
    openConnections: open,
    closedByServer,
    events: count,
    expected,
    missing,
    connectionsShort: short,
    duplicates,
    strays,
    misdelivered,
    sendSeconds,
    receiveSeconds: (performance.now() - phaseStart) / 1000,
    latencyMs: {
      avg: count ? sumUs / count / 1000 : 0,
      min: count ? minUs / 1000 : 0,
      p50: percentileMs(50),
      p75: percentileMs(75),
      p90: percentileMs(90),
      p99: percentileMs(99),
      p999: percentileMs(99.9),
      max: maxUs / 1000,
    },
    errors,
    firstError,
  };
}

let closing = false;

serveCommands<Command>(async (cmd) => {
  switch (cmd.cmd) {
    case 'connect': {
      await connectAll(cmd.host, cmd.port, cmd.paths, cmd.connections, cmd.concurrency, cmd.groups);
      send({ type: 'connected', ready: readyCount, failed: failedCount, seconds: (performance.now() - connectStarted) / 1000, errors, firstError });
      break;
    }
    case 'start':
      resetPhase(cmd.fromSeq, cmd.messages, cmd.seqGroups);
      send({ type: 'started' });
      break;
    case 'stop':
      await drain(cmd.drainMs);
      send({ type: 'report', report: report(cmd.sendSeconds) });
      break;
    case 'close':
      closing = true;
      for (const c of conns) c?.sock.destroy();
      send({ type: 'closed' });
      setTimeout(() => process.exit(0), 50);
      break;
  }
}, send);
