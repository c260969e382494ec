/**
 * Children a test file started and has not stopped yet die with it. A test that fails half-way
 * (say, one of two nodes started at once exits early and `Promise.all` rejects before the other
 * one is kept) would otherwise leave its processes running after the file ends: `npm test` runs
 * with `--test-force-exit`, which does not wait for them, and an orphaned chat node or Redis then
 * loads the machine for every later file (seen: a node left by a failed schema test ran on
 * through the rest of a CI run).
 */
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
let armed = false;

/** Kills `child` with SIGKILL when this process exits, unless it exited first. */
export function reapOnExit<T extends ChildProcess>(child: T): T {
  if (!armed) {
    armed = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}
