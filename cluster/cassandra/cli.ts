/**
 * `npm run cassandra -- <command>`: Apache Cassandra on loopback for development, from Maven
 * Central's jars (see runner.ts; docs in README and docs/storage.md).
 *
 *   fetch                    the jars into .cache/cassandra/<version>/lib (once; CI runs it)
 *   up [--nodes 1|3] [--port 9042] [--dir .cassandra]
 *                            start the node(s) in the background, wait until ready, print the
 *                            contact points; the data stays in the directory between runs
 *   status [--dir .cassandra]  each node: pid, running or DOWN, whether CQL answers
 *   down [--dir .cassandra]    stop every node of the directory (SIGTERM, SIGKILL after 20 s)
 */
import path from 'node:path';
import { CASSANDRA_VERSION, ensureJars } from './jars.ts';
import { findJava17 } from './java.ts';
import { runs, stopJvm } from './jvms.ts';
import { readState, writeState, type CassandraState } from './plan.ts';
import { releaseVersion } from './probes.ts';
import { startCassandra } from './runner.ts';

const USAGE = `usage: npm run cassandra -- <command> [options]

  fetch                                  fetch Cassandra ${CASSANDRA_VERSION}'s jars with Maven (once)
  up [--nodes 1|3] [--port 9042] [--dir .cassandra]
                                         start 1 node, or a ring of 3 on 127.0.0.1-3, in the background
  status [--dir .cassandra]              show the nodes and whether CQL answers
  down [--dir .cassandra]                stop them
`;

const log = (line: string): void => void process.stderr.write(`cassandra: ${line}\n`);

interface Args {
  command: string;
  nodes: 1 | 3;
  port: number;
  dir: string;
}

function parse(argv: string[]): Args {
  const args: Args = { command: argv[0] ?? 'help', nodes: 1, port: 9042, dir: '.cassandra' };
  for (let i = 1; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--nodes' && (value === '1' || value === '3')) args.nodes = Number(value) as 1 | 3;
    else if (flag === '--port' && value !== undefined && /^\d+$/.test(value)) args.port = Number(value);
    else if (flag === '--dir' && value !== undefined) args.dir = value;
    else throw new Error(`unexpected argument ${flag ?? ''} ${value ?? ''} (--nodes takes 1 or 3)\n\n${USAGE}`);
    i += 1;
  }
  return args;
}

function running(state: CassandraState): number[] {
  return state.nodes.filter((n) => n.pid !== null && runs(n.pid, n.marker)).map((n) => n.index);
}

async function up(a: Args): Promise<void> {
  const dir = path.resolve(a.dir);
  const old = readState(dir);
  if (old && running(old).length > 0) throw new Error(`Cassandra already runs from ${a.dir} (nodes ${running(old).join(', ')}): \`npm run cassandra -- down --dir ${a.dir}\` first`);
  const c = await startCassandra({ nodes: a.nodes, dataDir: dir, nativePort: a.port, owned: false, log });
  process.stdout.write(
    `Cassandra ${CASSANDRA_VERSION}: ${c.nodes.length} node(s), data center ${c.localDataCenter}, logs in ${path.relative(process.cwd(), dir) || '.'}/node*/cassandra.log\n` +
      `  CHAT_STORE_DRIVER=cassandra CHAT_CASSANDRA_CONTACT_POINTS=${c.contactPoints.join(',')} CHAT_CASSANDRA_REPLICATION_FACTOR=${c.nodes.length}\n` +
      `  stop with: npm run cassandra -- down${a.dir === '.cassandra' ? '' : ` --dir ${a.dir}`}\n`,
  );
}

async function status(a: Args): Promise<void> {
  const state = readState(path.resolve(a.dir));
  if (!state) return void process.stdout.write(`no Cassandra in ${a.dir}\n`);
  const lines = await Promise.all(
    state.nodes.map(async (n) => {
      const up = n.pid !== null && runs(n.pid, n.marker);
      const version = up ? await releaseVersion(n) : null;
      return `node ${n.index}  ${n.address}:${n.nativePort}  ${up ? `pid ${n.pid}` : 'DOWN'}  ${version ? `CQL ok (${version})` : up ? 'CQL not answering' : ''}  ${n.logFile}`;
    }),
  );
  process.stdout.write(`contact points ${state.contactPoints.join(',')}, data center ${state.localDataCenter}\n${lines.join('\n')}\n`);
}

async function down(a: Args): Promise<void> {
  const state = readState(path.resolve(a.dir));
  if (!state) return void log(`no Cassandra in ${a.dir}`);
  await Promise.all(
    state.nodes.map(async (n) => {
      if (n.pid === null) return;
      const result = await stopJvm(n.pid, n.marker, 20_000);
      if (result !== 'gone') log(`node ${n.index} (pid ${n.pid}) ${result}`);
      n.pid = null;
    }),
  );
  writeState(state);
  log('stopped');
}

async function main(): Promise<void> {
  const a = parse(process.argv.slice(2));
  switch (a.command) {
    case 'fetch':
      findJava17(); // fail early, in one line, on a machine without Java 17
      await ensureJars(log);
      return void log(`jars of Cassandra ${CASSANDRA_VERSION} ready`);
    case 'up':
      return up(a);
    case 'status':
      return status(a);
    case 'down':
      return down(a);
    case 'help':
    case '--help':
    case '-h':
      return void process.stdout.write(USAGE);
    default:
      throw new Error(`unknown command "${a.command}"\n\n${USAGE}`);
  }
}

main().catch((err: unknown) => {
  log((err as Error).message);
  process.exitCode = 1;
});
