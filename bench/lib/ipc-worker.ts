/**
 * A load process of a bench, driven over IPC. The parent side (`IpcWorker`) starts it pinned to
 * the load CPU (processes.ts), waits for its `hello`, then asks one command at a time and waits
 * for the answer, a timeout, a `failed` answer or the process's exit, keeping the tail of its
 * stderr for the error. The child side is ipc-serve.ts.
 *
 * Used by the SSE client process (sse-clients.ts) and the groupchat sender (posters.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BenchError } from './errors.ts';
import { assertNotInterrupted, pinnedCommand, REPO_ROOT, track } from './processes.ts';

export interface IpcCommand {
  cmd: string;
}
export type IpcAnswer = { type: 'hello'; pid: number } | { type: 'failed'; message: string } | { type: string };

export interface IpcWorkerOptions {
  /** Node flags before the script (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  /** Raise the child's descriptor limit to this (`ulimit -n`, up to the hard limit without privilege). */
  maxFiles?: number;
}

const quote = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;

export class IpcWorker<C extends IpcCommand, A extends IpcAnswer> {
  private waiting: ((a: A) => void) | null = null;
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly pid: number,
    /** What the errors call the process ("sender process"). */
    private readonly name: string,
    stderr: string,
  ) {
    this.stderr = stderr;
    child.on('message', (a: A) => {
      const w = this.waiting;
      this.waiting = null;
      w?.(a);
    });
    child.stderr!.on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-4000)));
  }

  /** Starts `script` (a .ts file under tsx) pinned to the load CPU; answers once it said hello. */
  static async start<C extends IpcCommand, A extends IpcAnswer>(name: string, script: string, options: IpcWorkerOptions = {}): Promise<IpcWorker<C, A>> {
    assertNotInterrupted();
    const [command, args] = pinnedCommand('load', process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', script]);
    const [file, argv] =
      options.maxFiles === undefined
        ? [command, args]
        : ['bash', ['-c', `ulimit -n ${options.maxFiles} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec ${[command, ...args].map(quote).join(' ')}`]];
    const child = spawn(file, argv, { cwd: REPO_ROOT, env: { PATH: process.env.PATH }, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    track(child);
    let stderr = '';
    const keep = (d: string): void => {
      stderr = (stderr + d).slice(-4000);
    };
    child.stderr!.setEncoding('utf8').on('data', keep);
    const hello = await new Promise<IpcAnswer>((resolve, reject) => {
      child.once('message', (a: IpcAnswer) => resolve(a));
      child.once('exit', (code) => reject(new BenchError(`${name} exited (code ${code}) before it started:\n${stderr}`)));
    });
    if (hello.type !== 'hello' || !('pid' in hello)) throw new BenchError(`${name}: unexpected first message ${JSON.stringify(hello)}`);
    child.stderr!.off('data', keep);
    return new IpcWorker<C, A>(child, hello.pid, name, stderr);
  }

  /** Sends `cmd`; answers the process's answer (a `failed` answer, a timeout or an exit rejects). */
  ask(cmd: C, timeoutMs: number): Promise<A> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new BenchError(`${this.name} did not answer ${cmd.cmd} within ${timeoutMs} ms:\n${this.stderr}`)), timeoutMs);
      const onExit = (code: number | null): void => {
        clearTimeout(timer);
        reject(new BenchError(`${this.name} exited (code ${code}) during ${cmd.cmd}:\n${this.stderr}`));
      };
      this.child.once('exit', onExit);
      this.waiting = (a) => {
        clearTimeout(timer);
        this.child.off('exit', onExit);
        if (a.type === 'failed') reject(new BenchError(`${this.name} failed during ${cmd.cmd}: ${(a as { message?: string }).message}`));
        else resolve(a);
      };
      this.child.send(cmd);
    });
  }

  /** Asks `close` (the process answers and exits); kills it if it does not answer within 5 s. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    try {
      await this.ask({ cmd: 'close' } as C, 5000);
    } catch {
      this.child.kill('SIGKILL');
    }
    await exited;
  }
}
