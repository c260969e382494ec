/**
 * `npm run cluster -- <command>`: a loopback cluster (Redis, the IdP, N chat nodes, HAProxy) for
 * development and demos. See docs/deploy.md; `npm run cluster -- help` for the commands.
 */
import path from 'node:path';
import { parseArgs, USAGE, type Args } from './lib/args.ts';
import { writeComposeEnv } from './lib/compose-env.ts';
import { DEFAULT_FIXTURE } from '../src/config/index.ts';
import { runs } from './lib/procs.ts';
import { startCluster } from './lib/start.ts';
import { readState, type ClusterState } from './lib/state.ts';
import { killNode, restartNode, stopCluster } from './lib/stop.ts';
import { status, summary } from './lib/summary.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const log = (line: string): void => void process.stderr.write(`cluster: ${line}\n`);

/** Reports processes that died while the cluster runs (a crash, or kill-node in a demo). */
function watch(dir: string): NodeJS.Timeout {
  const down = new Set<string>();
  return setInterval(() => {
    const state: ClusterState | null = readState(dir);
    if (!state) return;
    for (const [name, p] of Object.entries(state.procs)) {
      const up = runs(p.pid, p.marker);
      if (!up && !down.has(name)) log(`${name} (pid ${p.pid}) is down; see ${p.log}${name.startsWith('node-') ? `; \`npm run cluster -- restart-node ${name.slice(5)}\` brings it back` : ''}`);
      if (up && down.has(name)) log(`${name} is running again (pid ${p.pid})`);
      if (up) down.delete(name);
      else down.add(name);
    }
  }, 1000);
}

async function up(args: Args): Promise<void> {
  const dir = path.resolve(args.dir);
  // Installed before the start: Ctrl-C while processes come up must stop them, not orphan them.
  const interrupt = new AbortController();
  let onSignal = (signal: string): void => interrupt.abort(new Error(signal));
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  const { state } = await startCluster({
    signal: interrupt.signal,
    root: ROOT,
    dir,
    nodes: args.nodes,
    port: args.port,
    redisCluster: args.redisCluster,
    runtime: args.tsx ? 'tsx' : 'dist',
    fixturePath: args.fixture ?? DEFAULT_FIXTURE,
    launcherPid: process.pid,
    log,
    store: args.store,
    cassandraNodes: args.cassandraNodes,
  });
  process.stdout.write(`${summary(state)}\nCtrl-C stops everything; from another shell: npm run cluster -- down --dir ${args.dir}\n`);
  const watcher = watch(dir);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return void log('already stopping (nodes are draining)');
      stopping = true;
      clearInterval(watcher);
      log(`${signal}: stopping the cluster (nodes drain first)`);
      stopCluster(dir, { log, stopLauncher: false }).then(resolve, (err: unknown) => {
        log(`stop failed: ${(err as Error).message}`);
        process.exitCode = 1;
        resolve();
      });
    };
    onSignal = stop;
  });
  log('stopped');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = path.resolve(args.dir);
  switch (args.command) {
    case 'help':
      process.stdout.write(USAGE);
      return;
    case 'up':
      return up(args);
    case 'down':
      await stopCluster(dir, { log, stopLauncher: true });
      log('stopped');
      return;
    case 'status': {
      const state = readState(dir);
      process.stdout.write(state ? `${summary(state)}\n${status(state)}\n` : `no cluster in ${args.dir}\n`);
      return;
    }
    case 'restart-node':
      await restartNode(dir, args.index ?? 0, log);
      return;
    case 'kill-node':
      await killNode(dir, args.index ?? 0, log);
      return;
    case 'compose-env':
      writeComposeEnv(args.out ?? '.env');
      log(`wrote ${args.out} (mode 0600)`);
      return;
  }
}

main().catch((err: unknown) => {
  const e = err as NodeJS.ErrnoException;
  log(e.code === 'EEXIST' ? `${e.path ?? 'the file'} exists; not overwriting shared secrets` : e.message);
  process.exitCode = 1;
});
