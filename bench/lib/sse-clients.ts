/**
 * Many SSE connections held by one lean client process (bench/lib/sse-client-worker.ts), pinned to
 * the load CPU like wrk, and driven over IPC: connect them all, then per measured phase `start`
 * (reset counters) and `stop` (wait until every connection has every event sent, or a deadline,
 * then report latency, counts and losses).
 *
 * The child runs under `bash -c 'ulimit -n N; exec ...'` so that it may hold more sockets than the
 * harness's own descriptor limit allows (raising the soft limit up to the hard one needs no
 * privilege; past it, root only).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { BenchError } from './errors.ts';
import { assertNotInterrupted, pinnedCommand, REPO_ROOT, track } from './processes.ts';

export type Command =
  | { cmd: 'connect'; host: string; port: number; paths: string[]; connections: number; concurrency: number }
  | { cmd: 'start'; fromSeq: number; messages: number }
  | { cmd: 'stop'; sendSeconds: number; drainMs: number }
  | { cmd: 'close' };

export interface PhaseReport {
  /** Connections still open (and past `ready`) at the end of the phase. */
  openConnections: number;
  /** Connections the server closed since connecting (a slow consumer cut off, a crash). */
  closedByServer: number;
  /** Events received in the phase (every connection, every message). */
  events: number;
  /** openConnections x messages sent in the phase. */
  expected: number;
  /** Events the open connections lacked when the phase's drain ended. */
  missing: number;
  connectionsShort: number;
  /** Events seen twice on one connection, and events of messages outside the phase. */
  duplicates: number;
  strays: number;
  sendSeconds: number;
  receiveSeconds: number;
  latencyMs: { avg: number; min: number; p50: number; p75: number; p90: number; p99: number; p999: number; max: number };
  errors: number;
  firstError: string | null;
}

export type Answer =
  | { type: 'hello'; pid: number }
  | { type: 'connected'; ready: number; failed: number; seconds: number; errors: number; firstError: string | null }
  | { type: 'started' }
  | { type: 'report'; report: PhaseReport }
  | { type: 'closed' }
  | { type: 'failed'; message: string };

const WORKER = path.join(REPO_ROOT, 'bench/lib/sse-client-worker.ts');

export class SseClients {
  private waiting: ((a: Answer) => void) | null = null;
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly pid: number,
  ) {
    child.on('message', (a: Answer) => {
      const w = this.waiting;
      this.waiting = null;
      w?.(a);
    });
  }

  /** Starts the client process with a descriptor limit of `maxFiles`. */
  static async start(maxFiles: number): Promise<SseClients> {
    assertNotInterrupted();
    const [command, args] = pinnedCommand('load', process.execPath, ['--import', 'tsx', WORKER]);
    const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('bash', ['-c', `ulimit -n ${maxFiles} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec ${quoted}`], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    track(child);
    let stderr = '';
    const keep = (d: string): void => {
      stderr = (stderr + d).slice(-4000);
    };
    child.stderr!.setEncoding('utf8').on('data', keep);
    const hello = await new Promise<Answer>((resolve, reject) => {
      child.once('message', (a: Answer) => resolve(a));
      child.once('exit', (code) => reject(new BenchError(`SSE client process exited (code ${code}) before it started:\n${stderr}`)));
    });
    if (hello.type !== 'hello') throw new BenchError(`SSE client process: unexpected first message ${JSON.stringify(hello)}`);
    const clients = new SseClients(child, hello.pid);
    child.stderr!.off('data', keep);
    clients.stderr = stderr;
    child.stderr!.on('data', (d: string) => (clients.stderr = (clients.stderr + d).slice(-4000)));
    return clients;
  }

  private ask(cmd: Command, timeoutMs: number): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new BenchError(`SSE client process did not answer ${cmd.cmd} within ${timeoutMs} ms:\n${this.stderr}`)), timeoutMs);
      const onExit = (code: number | null): void => {
        clearTimeout(timer);
        reject(new BenchError(`SSE client process exited (code ${code}) during ${cmd.cmd}:\n${this.stderr}`));
      };
      this.child.once('exit', onExit);
      this.waiting = (a) => {
        clearTimeout(timer);
        this.child.off('exit', onExit);
        if (a.type === 'failed') reject(new BenchError(`SSE client process failed during ${cmd.cmd}: ${a.message}`));
        else resolve(a);
      };
      this.child.send(cmd);
    });
  }

  async connect(options: { host: string; port: number; paths: string[]; connections: number; concurrency?: number }): Promise<Extract<Answer, { type: 'connected' }>> {
    const a = await this.ask({ cmd: 'connect', concurrency: 256, ...options }, 300_000);
    if (a.type !== 'connected') throw new BenchError(`SSE client process: unexpected answer ${a.type} to connect`);
    return a;
  }

  /** A phase of `messages` messages with seqs from `fromSeq` begins: counters reset. */
  async start(fromSeq: number, messages: number): Promise<void> {
    await this.ask({ cmd: 'start', fromSeq, messages }, 10_000);
  }

  /** The phase's sends are over: waits up to `drainMs` for every event, then reports. */
  async stop(sendSeconds: number, drainMs: number): Promise<PhaseReport> {
    const a = await this.ask({ cmd: 'stop', sendSeconds, drainMs }, drainMs + 30_000);
    if (a.type !== 'report') throw new BenchError(`SSE client process: unexpected answer ${a.type} to stop`);
    return a.report;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    try {
      await this.ask({ cmd: 'close' }, 5000);
    } catch {
      this.child.kill('SIGKILL');
    }
    await exited;
  }
}
