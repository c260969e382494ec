/**
 * Child processes of a cluster, managed by pid so that any later command (`down`,
 * `restart-node`) can manage them too, not only the process that started them.
 *
 * Each runs detached in its own process group: Ctrl-C in the terminal then reaches only the
 * launcher, which stops the others in order (nodes first, so they drain while Redis and the IdP
 * are still there) instead of every process dying at the same instant.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export interface SpawnSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** stdout and stderr are appended here. */
  logFile: string;
}

export function spawnLogged(spec: SpawnSpec): number {
  const fd = fs.openSync(spec.logFile, 'a');
  try {
    fs.writeSync(fd, `--- ${new Date().toISOString()} start ${spec.name}: ${spec.command} ${spec.args.join(' ')}\n`);
    const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', fd, fd], detached: true });
    // A spawn failure (no such binary) arrives as an event; without a listener it would throw.
    child.on('error', (err) => fs.appendFileSync(spec.logFile, `spawn failed: ${err.message}\n`));
    if (child.pid === undefined) throw new Error(`cannot start ${spec.name} (${spec.command}): see ${spec.logFile}`);
    // The launcher must be able to exit while the process runs on (restart-node), and the
    // process must survive the launcher's own stop until it is stopped in order.
    child.unref();
    return child.pid;
  } finally {
    fs.closeSync(fd);
  }
}

/** Alive and not a zombie (an exited child nobody reaped yet still answers kill(pid, 0)). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true; // no /proc (not Linux): trust kill(pid, 0)
  }
}

/**
 * Whether pid still runs the program recorded for it: a pid from an old state file may have
 * been reused by an unrelated process, which must never be signalled.
 */
export function runs(pid: number, marker: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(marker);
  } catch {
    return true;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function waitExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** SIGTERM (or the given signal), then SIGKILL after graceMs. Resolves once the process is gone. */
export async function stopPid(pid: number, marker: string, graceMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<'stopped' | 'killed' | 'gone'> {
  if (!runs(pid, marker)) return 'gone';
  try {
    process.kill(pid, signal);
  } catch {
    return 'gone';
  }
  if (await waitExit(pid, graceMs)) return 'stopped';
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* exited meanwhile */
  }
  await waitExit(pid, 5000);
  return 'killed';
}

/** The last lines of a log, for the error message when a process fails to come up. */
export function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
