/**
 * What the fanout bench reads of a process from /proc (Linux): resident memory, CPU time, and the
 * descriptor limit. Elsewhere the figures are reported as -1 and the limit check is skipped.
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** Resident set size in KiB (VmRSS), or -1. */
export function rssKiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : -1;
  } catch {
    return -1;
  }
}

/** User and system (kernel) CPU seconds the process has used so far, or -1s. */
export function cpuSeconds(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start at the last ')'; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
  } catch {
    return { user: -1, system: -1 };
  }
}

/** The soft limit of open files of the process, or null when unknown. */
export function maxOpenFiles(pid: number): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    if (!m) return null;
    return m[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m[1]);
  } catch {
    return null;
  }
}

/**
 * Seconds the process's main thread (a node's event loop) has spent runnable but waiting for a
 * CPU (/proc/<pid>/schedstat, second field, ns), or -1: the share of the time other processes
 * took the CPU from it.
 */
export function runQueueSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return -1;
  }
}

/** CPU use of `pid` over an interval, as fractions of one core. */
export class CpuMeter {
  private cpu0 = { user: 0, system: 0 };
  private wait0 = 0;
  private t0 = 0;

  constructor(private readonly pid: number) {}

  start(): void {
    this.cpu0 = cpuSeconds(this.pid);
    this.wait0 = runQueueSeconds(this.pid);
    this.t0 = performance.now();
  }

  /**
   * Fractions of the interval since start(): CPU used (1 = one core busy the whole time), its
   * kernel part, and time spent waiting for a CPU (main thread); -1s when unknown.
   */
  read(): { total: number; user: number; system: number; waiting: number } {
    const cpu = cpuSeconds(this.pid);
    const wait = runQueueSeconds(this.pid);
    const seconds = (performance.now() - this.t0) / 1000;
    if (this.cpu0.user < 0 || cpu.user < 0 || seconds <= 0) return { total: -1, user: -1, system: -1, waiting: -1 };
    const user = (cpu.user - this.cpu0.user) / seconds;
    const system = (cpu.system - this.cpu0.system) / seconds;
    const waiting = this.wait0 < 0 || wait < 0 ? -1 : (wait - this.wait0) / seconds;
    return { total: user + system, user, system, waiting };
  }
}

/** Busy and total jiffies per CPU (/proc/stat: busy = everything but idle and iowait), or []. */
function cpuTimes(): Array<{ busy: number; total: number }> {
  try {
    return readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .filter((l) => /^cpu\d+ /.test(l))
      .map((l) => {
        const v = l.trim().split(/\s+/).slice(1).map(Number);
        const total = v.reduce((a, b) => a + b, 0);
        return { busy: total - (v[3] ?? 0) - (v[4] ?? 0), total };
      });
  } catch {
    return [];
  }
}

/** How busy each CPU of the machine was over an interval (every process, kernel and softirq included). */
export class MachineMeter {
  private t0: Array<{ busy: number; total: number }> = [];

  start(): void {
    this.t0 = cpuTimes();
  }

  /** Busy fraction per CPU since start(). */
  read(): number[] {
    return cpuTimes().map((t, i) => {
      const a = this.t0[i];
      return a && t.total > a.total ? (t.busy - a.busy) / (t.total - a.total) : -1;
    });
  }
}
