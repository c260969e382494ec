/**
 * Stopping, from the state file, so any shell can do it: nodes first (SIGTERM: each turns
 * unready, leaves the ring, finishes what it accepted, and still has Redis, the IdP and its
 * store while it does), then the IdP, HAProxy, Redis and Cassandra.
 */
import { nodeSpec, type ProcSpec } from './specs.ts';
import { isAlive, runs, spawnLogged, stopPid, waitExit } from './procs.ts';
import { waitUntil } from './probes.ts';
import { loadOrCreateSecrets } from './secrets.ts';
import { readState, updateProc, writeState, type ClusterState } from './state.ts';
import { nodeOf } from './layout.ts';

/** In the launcher's command line (`tsx cluster/run.ts up`). */
export const LAUNCHER_MARKER = 'cluster/run.ts';

export interface StopOptions {
  log: (line: string) => void;
  /**
   * Ask a live foreground launcher to stop instead (it then stops the rest in order and exits);
   * false when called by that launcher itself.
   */
  stopLauncher: boolean;
}

const GRACE: Record<string, number> = { idp: 5000, haproxy: 5000, redis: 5000 };
/** Cassandra drains on SIGTERM (flushes its memtables): seconds. */
const CASSANDRA_GRACE_MS = 30_000;
const NODE_GRACE_MS = 20_000;

function mustRead(dir: string): ClusterState {
  const state = readState(dir);
  if (!state) throw new Error(`no cluster state in ${dir} (nothing was started there, or it was cleaned up)`);
  return state;
}

export async function stopCluster(dir: string, o: StopOptions): Promise<void> {
  let state = mustRead(dir);
  const launcher = state.launcherPid;
  if (o.stopLauncher && launcher !== null && launcher !== process.pid && runs(launcher, LAUNCHER_MARKER)) {
    o.log(`asking the launcher (pid ${launcher}) to stop the cluster`);
    process.kill(launcher, 'SIGTERM');
    await waitExit(launcher, NODE_GRACE_MS + 20_000);
    state = mustRead(dir); // it may have changed nothing (if it died), so fall through
  }
  const names = Object.keys(state.procs);
  const nodes = names.filter((n) => n.startsWith('node-'));
  const redis = names.filter((n) => n === 'redis' || n.startsWith('redis-'));
  // Cassandra last: the nodes drain into it.
  const cassandra = names.filter((n) => n.startsWith('cassandra-'));
  const order: string[][] = [nodes, ['idp'], ['haproxy'], redis, cassandra];
  for (const group of order) {
    await Promise.all(
      group.map(async (name) => {
        const p = state.procs[name];
        if (!p) return;
        const result = await stopPid(p.pid, p.marker, GRACE[name] ?? (name.startsWith('redis-') ? GRACE.redis! : name.startsWith('cassandra-') ? CASSANDRA_GRACE_MS : NODE_GRACE_MS));
        if (result !== 'gone') o.log(`${name} (pid ${p.pid}) ${result}`);
        delete state.procs[name];
      }),
    );
  }
  state.launcherPid = null;
  writeState(state);
}

/** A crash, for demos: SIGKILL, no drain; the others notice when its membership expires. */
export async function killNode(dir: string, index: number, log: (line: string) => void): Promise<void> {
  const state = mustRead(dir);
  const node = nodeOf(state.layout, index);
  const p = state.procs[node.id];
  if (!p || !runs(p.pid, p.marker)) throw new Error(`${node.id} is not running`);
  process.kill(p.pid, 'SIGKILL');
  await waitExit(p.pid, 5000);
  log(`${node.id} (pid ${p.pid}) killed`);
}

/** A rolling-restart step: SIGTERM (drain), wait, start again on the same ports and id. */
export async function restartNode(dir: string, index: number, log: (line: string) => void, readyTimeoutMs = 60_000): Promise<number> {
  const state = mustRead(dir);
  const node = nodeOf(state.layout, index);
  const p = state.procs[node.id];
  if (p && runs(p.pid, p.marker)) {
    log(`${node.id}: draining (SIGTERM to pid ${p.pid})`);
    await stopPid(p.pid, p.marker, NODE_GRACE_MS);
  }
  const spec: ProcSpec = nodeSpec(state, loadOrCreateSecrets(dir), index);
  const pid = spawnLogged(spec);
  updateProc(dir, node.id, { pid, marker: spec.marker, log: spec.logFile });
  await waitUntil(node.id, spec.ready, () => isAlive(pid), readyTimeoutMs);
  log(`${node.id} ready again (pid ${pid})`);
  return pid;
}
