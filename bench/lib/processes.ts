/**
 * Child processes for benchmarks: start a TypeScript entry point under tsx, wait until it is
 * ready, and make sure nothing outlives the harness, whether it ends normally, throws, or is
 * interrupted with Ctrl-C / SIGTERM.
 *
 * Every child started here (and any other registered with track()) is in one registry:
 *  - SIGINT / SIGTERM: children get SIGTERM, then SIGKILL after a grace period, then we exit;
 *  - process exit (including after an uncaught exception): survivors get SIGKILL, and the
 *    synchronous cleanups registered with onExit() run (temp dirs).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { BenchError } from './errors.ts';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

const live = new Set<ChildProcess>();
const exitCleanups: Array<() => void> = [];
let handlersInstalled = false;
let interruptedBy: NodeJS.Signals | null = null;

/** Throws once the harness was interrupted, so that no new child or load run starts while it winds down. */
export function assertNotInterrupted(): void {
  if (interruptedBy !== null) throw new BenchError(`interrupted (${interruptedBy})`);
}

const alive = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    for (const child of live) if (alive(child)) child.kill('SIGKILL');
    for (const cleanup of exitCleanups.splice(0)) {
      try {
        cleanup();
      } catch {
        // Best effort: exiting anyway.
      }
    }
  });
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      if (interruptedBy !== null) return;
      interruptedBy = signal;
      process.stderr.write(`\nbench: ${signal}, stopping ${live.size} child process(es)\n`);
      void stopAll().finally(() => process.exit(code));
    });
  }
}

/** Registers a child so that it is killed when the harness ends, however it ends. */
export function track(child: ChildProcess): void {
  installHandlers();
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/**
 * Registers a synchronous cleanup to run at process exit (after children are killed). Returns
 * a function that runs it now instead (once) and unregisters it.
 */
export function onExit(cleanup: () => void): () => void {
  installHandlers();
  exitCleanups.push(cleanup);
  return () => {
    const i = exitCleanups.indexOf(cleanup);
    if (i === -1) return;
    exitCleanups.splice(i, 1);
    cleanup();
  };
}

async function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (!alive(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => alive(child) && child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function stopAll(graceMs = 3000): Promise<void> {
  await Promise.all([...live].map((child) => terminate(child, graceMs)));
}

/**
 * CPU pinning, so that the load generator and the process under test do not fight over one core
 * while another idles (on a 2-core machine that alone swings results by 1.5x): targets get every
 * CPU but the last, wrk gets the last. On by default when taskset exists and there are >= 2 CPUs;
 * BENCH_PIN=0 turns it off.
 */
export type CpuRole = 'target' | 'load';
let pinningCache: Record<CpuRole, string> | null | undefined;

export function cpuPinning(): Record<CpuRole, string> | null {
  if (pinningCache !== undefined) return pinningCache;
  const cpus = os.availableParallelism();
  const hasTaskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
  pinningCache = process.env.BENCH_PIN === '0' || cpus < 2 || !hasTaskset ? null : { target: cpus === 2 ? '0' : `0-${cpus - 2}`, load: String(cpus - 1) };
  return pinningCache;
}

/** `command args` as run with the role's CPU pinning (through taskset, which execs: same pid). */
export function pinnedCommand(role: CpuRole, command: string, args: string[]): [string, string[]] {
  const pins = cpuPinning();
  return pins ? ['taskset', ['-c', pins[role], command, ...args]] : [command, args];
}

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The stdout line that matched `readyLine`, if one was asked for. */
  readonly readyLine: string | null;
  /** Last lines of stdout and stderr, for error messages. */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  name: string;
  /** Entry point, relative to the repository root. */
  file: string;
  args?: string[];
  /** The complete environment of the child (nothing is inherited implicitly). */
  env: Record<string, string | undefined>;
  /** Ready when a stdout line satisfies this... */
  readyLine?: (line: string) => boolean;
  /** ...and/or when GET on this URL answers 200. */
  readyUrl?: string;
  timeoutMs?: number;
}

/** Starts `node --import tsx <file>` and resolves once it is ready; rejects (and kills it) if it exits or times out first. */
export async function startTsx(options: StartOptions): Promise<ManagedProcess> {
  const { name, timeoutMs = 30_000 } = options;
  assertNotInterrupted();
  // Built bundles (.mjs, from `npm run build`) run on plain node, as `npm start` runs them; sources go through tsx.
  const loader = options.file.endsWith('.mjs') ? [] : ['--import', 'tsx'];
  // BENCH_NODE_ARGS: extra node flags for the benched chat node only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeFlags = name === 'chat-node' && process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(/\s+/).filter(Boolean) : [];
  const [command, args] = pinnedCommand('target', process.execPath, [...nodeFlags, ...loader, options.file, ...(options.args ?? [])]);
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);

  const lines: string[] = [];
  const remember = (stream: string) => (line: string): void => {
    lines.push(`[${name} ${stream}] ${line}`);
    if (lines.length > 40) lines.shift();
    if (process.env.BENCH_VERBOSE === '1') process.stderr.write(`[${name}] ${line}\n`);
  };
  // Both pipes are drained for the whole life of the child, or it would block once they fill.
  const stdout = readline.createInterface({ input: child.stdout! });
  stdout.on('line', remember('out'));
  readline.createInterface({ input: child.stderr! }).on('line', remember('err'));

  const tail = (): string => (lines.length ? lines.join('\n') : `[${name}] (no output)`);
  const managed = (readyLine: string | null): ManagedProcess => ({
    name,
    child,
    readyLine,
    tail,
    stop: (graceMs = 3000) => terminate(child, graceMs),
  });

  const exitedEarly = new Promise<never>((_, reject) => {
    // 'close' rather than 'exit': by then the pipes are drained, so the tail holds the last words.
    child.once('close', (code, signal) => reject(new BenchError(`${name} exited before it was ready (${signal ?? `code ${code}`}):\n${tail()}`)));
    child.once('error', (err) => reject(new BenchError(`${name} could not start: ${err.message}`)));
  });
  exitedEarly.catch(() => undefined);

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BenchError(`${name} was not ready within ${timeoutMs} ms:\n${tail()}`)), timeoutMs);
  });

  const ready = (async (): Promise<string | null> => {
    let matched: string | null = null;
    if (options.readyLine) {
      const predicate = options.readyLine;
      matched = await new Promise<string>((resolve) => {
        const onLine = (line: string): void => {
          if (!predicate(line)) return;
          stdout.off('line', onLine);
          resolve(line);
        };
        stdout.on('line', onLine);
      });
    }
    if (options.readyUrl && !(await pollUntilOk(options.readyUrl, () => alive(child)))) {
      throw new BenchError(`${name} exited before ${options.readyUrl} answered 200:\n${tail()}`);
    }
    return matched;
  })();
  ready.catch(() => undefined); // It may settle after the race is lost; the race reports.

  try {
    return managed(await Promise.race([ready, exitedEarly, timedOut]));
  } catch (err) {
    await terminate(child, 1000);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `url` until it answers 200 (other answers and refused connections are retried) while
 * `keepGoing()` holds; resolves false if it stopped holding first.
 */
export async function pollUntilOk(url: string, keepGoing: () => boolean = () => true, intervalMs = 100): Promise<boolean> {
  while (keepGoing()) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return false;
}

/** A loopback port that was free a moment ago (for children that need a number, not 0). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new BenchError('could not find a free port'))));
    });
  });
}
