/**
 * The state file `<dir>/cluster.json`: the layout and every process's pid, so that `down`,
 * `restart-node` and `kill-node` work from any shell, and a launcher killed outright (SIGKILL)
 * still leaves enough behind to stop what it started. Plain pid files go to `<dir>/pids/` too,
 * for `kill $(cat .cluster/pids/node-2.pid)` in a demo.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ClusterLayout } from './layout.ts';

export type Runtime = 'dist' | 'tsx';

/** The nodes' store: the shared SQLite file under `data/`, or the launcher's Cassandra. */
export type ClusterStore =
  | { driver: 'sqlite' }
  | { driver: 'cassandra'; contactPoints: string[]; localDataCenter: string; keyspace: string; replicationFactor: number };

export interface ProcRecord {
  pid: number;
  /** A string the process's command line contains: guards against signalling a reused pid. */
  marker: string;
  log: string;
}

export interface ClusterState {
  version: 1;
  /** The checkout the processes run from. */
  root: string;
  runtime: Runtime;
  /** The `up` process in the foreground; null once it is gone or for a cluster started as a library. */
  launcherPid: number | null;
  startedAt: string;
  fixturePath: string;
  layout: ClusterLayout;
  /** Absent in state files from before the Cassandra option: sqlite. */
  store?: ClusterStore;
  procs: Record<string, ProcRecord>;
}

export const stateFile = (dir: string): string => path.join(dir, 'cluster.json');

export function readState(dir: string): ClusterState | null {
  try {
    const state = JSON.parse(fs.readFileSync(stateFile(dir), 'utf8')) as ClusterState;
    if (state.version !== 1) throw new Error(`${stateFile(dir)}: unknown version`);
    state.layout.redisCluster ??= []; // written before --redis-cluster existed
    return state;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Written to a temporary file and renamed: a reader never sees half a file. */
export function writeState(state: ClusterState): void {
  const dir = state.layout.dir;
  const tmp = `${stateFile(dir)}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(tmp, stateFile(dir));
  const pids = path.join(dir, 'pids');
  fs.mkdirSync(pids, { recursive: true });
  for (const f of fs.readdirSync(pids)) if (!(f.replace(/\.pid$/, '') in state.procs)) fs.rmSync(path.join(pids, f), { force: true });
  for (const [name, p] of Object.entries(state.procs)) fs.writeFileSync(path.join(pids, `${name}.pid`), `${p.pid}\n`);
}

/** Re-read, change one process's record, write back (restart-node runs beside the launcher). */
export function updateProc(dir: string, name: string, record: ProcRecord | null): ClusterState {
  const state = readState(dir);
  if (!state) throw new Error(`no cluster state in ${dir}`);
  if (record) state.procs[name] = record;
  else delete state.procs[name];
  writeState(state);
  return state;
}
