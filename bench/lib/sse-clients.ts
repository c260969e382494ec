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
import path from 'node:path';
import { BenchError } from './errors.ts';
import { IpcWorker } from './ipc-worker.ts';
import { REPO_ROOT } from './processes.ts';

export type Command =
  | { cmd: 'connect'; host: string; port: number; paths: string[]; connections: number; concurrency: number; groups?: number[] }
  | { cmd: 'start'; fromSeq: number; messages: number; seqGroups?: number[] }
  | { cmd: 'stop'; sendSeconds: number; drainMs: number }
  | { cmd: 'close' };

export interface PhaseReport {
  /** Connections still open (and past `ready`) at the end of the phase. */
  openConnections: number;
  /** Connections the server closed since connecting (a slow consumer cut off, a crash). */
  closedByServer: number;
  /** Events received in the phase (every connection, every message). */
  events: number;
  /** Events the open connections were to receive: openConnections x messages, or with groups each connection's group's messages. */
  expected: number;
  /** Events the open connections lacked when the phase's drain ended. */
  missing: number;
  connectionsShort: number;
  /** Events seen twice on one connection, and events of messages outside the phase. */
  duplicates: number;
  strays: number;
  /** With groups: events a connection received of a message sent to another group. */
  misdelivered: number;
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
  private constructor(private readonly worker: IpcWorker<Command, Answer>) {}

  get pid(): number {
    return this.worker.pid;
  }

  /** Starts the client process with a descriptor limit of `maxFiles`. */
  static async start(maxFiles: number): Promise<SseClients> {
    return new SseClients(await IpcWorker.start<Command, Answer>('SSE client process', WORKER, { maxFiles }));
  }

  private ask(cmd: Command, timeoutMs: number): Promise<Answer> {
    return this.worker.ask(cmd, timeoutMs);
  }

  /**
   * Opens `connections` streams, connection i on paths[i % paths.length]. `groups` (optional):
   * the group of each connection; a phase started with `seqGroups` then expects each connection
   * to get exactly the messages of its own group (the groupchat bench), instead of all of them.
   */
  async connect(options: { host: string; port: number; paths: string[]; connections: number; concurrency?: number; groups?: number[] }): Promise<Extract<Answer, { type: 'connected' }>> {
    const a = await this.ask({ cmd: 'connect', concurrency: 256, ...options }, 300_000);
    if (a.type !== 'connected') throw new BenchError(`SSE client process: unexpected answer ${a.type} to connect`);
    return a;
  }

  /**
   * A phase of `messages` messages with seqs from `fromSeq` begins: counters reset. `seqGroups`
   * (with `groups` at connect): the group each of these messages goes to.
   */
  async start(fromSeq: number, messages: number, seqGroups?: number[]): Promise<void> {
    await this.ask(seqGroups === undefined ? { cmd: 'start', fromSeq, messages } : { cmd: 'start', fromSeq, messages, seqGroups }, 10_000);
  }

  /** The phase's sends are over: waits up to `drainMs` for every event, then reports. */
  async stop(sendSeconds: number, drainMs: number): Promise<PhaseReport> {
    const a = await this.ask({ cmd: 'stop', sendSeconds, drainMs }, drainMs + 30_000);
    if (a.type !== 'report') throw new BenchError(`SSE client process: unexpected answer ${a.type} to stop`);
    return a.report;
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
