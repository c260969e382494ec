/**
 * Cassandra JVMs as child processes, and the guarantees that none outlives its owner.
 *
 * Each JVM runs detached, in a process group of its own: Ctrl-C in a terminal, or a test runner
 * signalling its worker's group, must not kill Cassandra before the chat nodes on it drained.
 * Detached processes survive their parent, so an owner that dies has to take them along:
 *
 *  - on `exit` (normal end, process.exit, an uncaught exception) the registry SIGKILLs every
 *    JVM still registered, synchronously;
 *  - on SIGINT/SIGTERM/SIGHUP the same, then the signal's default (the process ends) unless the
 *    program has handlers of its own, which then decide (and `exit` still runs); an owner that
 *    stops Cassandra itself in its own order turns this off (`killOnSignal: false`);
 *  - a SIGKILLed owner runs no handler at all: a watchdog (`sh`, detached too) holds a pipe from
 *    the owner and the list of JVM pids; when the pipe closes without the owner saying "done" it
 *    SIGKILLs them. It checks each pid's command line first (a pid may have been reused).
 *
 * A JVM started for the CLI (`npm run cassandra -- up`) is meant to outlive it: it is not
 * registered, and `down` stops it by the pid recorded in the state file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { isAlive } from '../lib/procs.ts';

export interface JvmSpec {
  java: string;
  args: string[];
  cwd: string;
  logFile: string;
  /** A string only this JVM's command line contains (its yaml path): guards pid reuse. */
  marker: string;
  /** Registered for the kill-on-exit guarantees (false: the CLI's long-lived nodes). */
  owned: boolean;
  /**
   * Owned JVMs also die on the owner's SIGINT/SIGTERM/SIGHUP (default). False for an owner that
   * handles those itself and stops Cassandra last, after what runs on it (the cluster launcher:
   * chat nodes drain on Ctrl-C and still need their store).
   */
  killOnSignal?: boolean;
}

const live = new Map<number, string>(); // pid -> marker, owned JVMs only
let watchdog: ChildProcess | null = null;
let exitHooked = false;
let signalsHooked = false;

function killAllSync(): void {
  for (const [pid, marker] of live) {
    if (runs(pid, marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
  }
  live.clear();
  tellWatchdog();
}

function onSignal(signal: NodeJS.Signals): void {
  killAllSync();
  // Only our listener: behave as if there were none (the signal ends the process).
  if (process.listenerCount(signal) === 1) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
}

function hook(signals: boolean): void {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', killAllSync);
  }
  if (signals && !signalsHooked) {
    signalsHooked = true;
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  }
}

/**
 * The watchdog reads lines of pids (the latest line is the current list; "done" ends it
 * quietly). On EOF, its owner is gone: SIGKILL what the last list names, if it still runs Cassandra.
 */
const WATCHDOG = `pids=""
while IFS= read -r line; do
  if [ "$line" = done ]; then exit 0; fi
  pids="$line"
done
for p in $pids; do
  if grep -qa CassandraDaemon "/proc/$p/cmdline" 2>/dev/null; then kill -9 "$p" 2>/dev/null; fi
done`;

function tellWatchdog(): void {
  if (!watchdog?.stdin?.writable) return;
  watchdog.stdin.write(`${[...live.keys()].join(' ')}\n`);
}

function ensureWatchdog(): void {
  if (watchdog && watchdog.exitCode === null) return;
  watchdog = spawn('sh', ['-c', WATCHDOG], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  watchdog.on('error', () => {}); // no sh: the exit hooks still hold
  watchdog.stdin?.on('error', () => {});
  // Neither the watchdog nor its pipe may keep the owner's event loop alive.
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
}

/** Starts a JVM; answers its pid. Its stdout and stderr are appended to the log file. */
export function spawnJvm(spec: JvmSpec): number {
  const fd = fs.openSync(spec.logFile, 'a');
  let child: ChildProcess;
  try {
    fs.writeSync(fd, `--- ${new Date().toISOString()} start: ${spec.java} ${spec.args.join(' ')}\n`);
    child = spawn(spec.java, spec.args, { cwd: spec.cwd, stdio: ['ignore', fd, fd], detached: true });
  } finally {
    fs.closeSync(fd);
  }
  child.on('error', (err) => fs.appendFileSync(spec.logFile, `spawn failed: ${err.message}\n`));
  if (child.pid === undefined) throw new Error(`cannot start ${spec.java}: see ${spec.logFile}`);
  const pid = child.pid;
  child.unref();
  if (spec.owned) {
    hook(spec.killOnSignal ?? true);
    ensureWatchdog();
    live.set(pid, spec.marker);
    tellWatchdog();
    child.once('exit', () => forget(pid));
  }
  return pid;
}

/** No longer ours to kill (it exited, or was stopped). */
export function forget(pid: number): void {
  if (live.delete(pid)) tellWatchdog();
  if (live.size === 0 && watchdog?.stdin?.writable) {
    watchdog.stdin.end('done\n');
    watchdog = null;
  }
}

export { isAlive };

/** The pid still runs the JVM recorded for it (not a reused pid). */
export function runs(pid: number, marker: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * SIGTERM (Cassandra's shutdown hook drains: flushes memtables, leaves gossip), SIGKILL after
 * graceMs; graceMs 0 kills at once. Resolves once the process is gone.
 */
export async function stopJvm(pid: number, marker: string, graceMs: number): Promise<'stopped' | 'killed' | 'gone'> {
  if (!runs(pid, marker)) {
    forget(pid);
    return 'gone';
  }
  let result: 'stopped' | 'killed' = 'killed';
  if (graceMs > 0) {
    process.kill(pid, 'SIGTERM');
    if (await waitGone(pid, graceMs)) result = 'stopped';
  }
  if (result === 'killed') {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* exited meanwhile */
    }
    await waitGone(pid, 10_000);
  }
  forget(pid);
  return result;
}

/** The last lines of a log, for an error message. */
export function tail(file: string, lines = 25): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
