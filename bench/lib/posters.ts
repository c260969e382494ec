/**
 * The `groupchat` bench's sender process (bench/lib/post-worker.ts), pinned to the load CPU and
 * driven over IPC: `init` hands it the world, each `run` sends one open-loop phase and reports,
 * `close` ends it.
 */
import path from 'node:path';
import { BenchError } from './errors.ts';
import type { GroupchatPlan } from './groupchat-plan.ts';
import { IpcWorker } from './ipc-worker.ts';
import { REPO_ROOT } from './processes.ts';

export interface PostInit {
  host: string;
  port: number;
  /** Most keep-alive connections open at once (opened as needed, one request in flight on each). */
  connections: number;
  plan: GroupchatPlan;
  /** `/api/v1/tenants/<t>/applications/<a>`. */
  basePath: string;
  /** Conversation id per group. */
  conversations: string[];
  /** User token per group and member. */
  tokens: string[][];
  /** Approximate size of each request's JSON body. */
  bodyBytes: number;
  /** Filler text for the body. */
  padding: string;
}

export interface PostReport {
  scheduled: number;
  answered: number;
  sendSeconds: number;
  /** HTTP status -> count. */
  statuses: Record<string, number>;
  /** Scheduled send -> answer read. */
  latencyMs: { p50: number; p99: number; max: number };
  /** How late the generator itself wrote requests (its own timer and CPU). */
  lagMs: { p50: number; p99: number; max: number };
  errors: number;
  firstError: string | null;
}

export type PostCommand =
  | { cmd: 'init'; init: PostInit }
  | { cmd: 'run'; fromSeq: number; rate: number; seconds: number; drainMs: number }
  | { cmd: 'close' };

export type PostAnswer =
  | { type: 'hello'; pid: number }
  | { type: 'ready' }
  | { type: 'report'; report: PostReport }
  | { type: 'closed' }
  | { type: 'failed'; message: string };

const WORKER = path.join(REPO_ROOT, 'bench/lib/post-worker.ts');

export class Posters {
  private constructor(private readonly worker: IpcWorker<PostCommand, PostAnswer>) {}

  get pid(): number {
    return this.worker.pid;
  }

  static async start(init: PostInit): Promise<Posters> {
    // BENCH_LOAD_NODE_ARGS: node flags for the sender (e.g. `--cpu-prof --cpu-prof-dir=DIR`, to see what the generator costs).
    const nodeFlags = process.env.BENCH_LOAD_NODE_ARGS ? process.env.BENCH_LOAD_NODE_ARGS.split(/\s+/).filter(Boolean) : [];
    const posters = new Posters(await IpcWorker.start<PostCommand, PostAnswer>('sender process', WORKER, { nodeFlags }));
    const ready = await posters.worker.ask({ cmd: 'init', init }, 30_000);
    if (ready.type !== 'ready') throw new BenchError(`sender process: unexpected answer ${ready.type} to init`);
    return posters;
  }

  /** Sends messages fromSeq.. at `rate` for `seconds`; waits up to `drainMs` for the last answers. */
  async run(fromSeq: number, rate: number, seconds: number, drainMs: number): Promise<PostReport> {
    const a = await this.worker.ask({ cmd: 'run', fromSeq, rate, seconds, drainMs }, (seconds + 30) * 1000 + drainMs);
    if (a.type !== 'report') throw new BenchError(`sender process: unexpected answer ${a.type} to run`);
    return a.report;
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
