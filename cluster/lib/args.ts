/** The command line of `npm run cluster -- <command> [options]`. */
export type Command = 'up' | 'down' | 'status' | 'restart-node' | 'kill-node' | 'compose-env' | 'help';

export interface Args {
  command: Command;
  nodes: number;
  port: number;
  dir: string;
  /** restart-node / kill-node */
  index: number | null;
  tsx: boolean;
  /** up: a Redis Cluster (3 masters + 3 replicas) instead of one redis-server. */
  redisCluster: boolean;
  fixture: string | null;
  /** compose-env: the file to write */
  out: string | null;
  /** up: the nodes' store: one shared SQLite file, or Apache Cassandra started by the launcher */
  store: 'sqlite' | 'cassandra';
  /** up --store cassandra: 1 Cassandra node (replication factor 1) or a ring of 3 (factor 3) */
  cassandraNodes: 1 | 3;
}

export const USAGE = `usage: npm run cluster -- <command> [options]

  up [--nodes 3] [--port 8080] [--dir .cluster] [--tsx] [--redis-cluster] [--fixture <file>]
     [--store sqlite|cassandra] [--cassandra-nodes 1|3]
        start Redis, the IdP, N nodes and HAProxy on loopback; stay in the foreground;
        Ctrl-C (or SIGTERM) stops everything, nodes first. --store cassandra starts Apache
        Cassandra too (npm run cassandra; CQL on port+20) and runs the nodes on it
  down [--dir .cluster]            stop the cluster of that directory
  status [--dir .cluster]          list its processes and whether they run
  restart-node <i> [--dir .cluster]  drain node i (SIGTERM) and start it again
  kill-node <i> [--dir .cluster]   SIGKILL node i (a crash, for demos)
  compose-env --out .env           write fresh shared secrets for docker-compose.cluster.yml

  --tsx    run the nodes and the IdP from src/ through tsx instead of the dist/ bundle
  --redis-cluster  a Redis Cluster of 3 masters and 3 replicas (ports port+3 to port+8, cluster
           bus port+10003 to port+10008) instead of one redis-server
`;

const COMMANDS: readonly Command[] = ['up', 'down', 'status', 'restart-node', 'kill-node', 'compose-env', 'help'];

function int(flag: string, raw: string | undefined): number {
  if (raw === undefined || !/^\d+$/.test(raw)) throw new Error(`${flag} needs a whole number (got ${raw ?? 'nothing'})`);
  return Number(raw);
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { command: 'help', nodes: 3, port: 8080, dir: '.cluster', index: null, tsx: false, redisCluster: false, fixture: null, out: null, store: 'sqlite', cassandraNodes: 1 };
  const rest = [...argv];
  const first = rest.shift();
  if (first === undefined || first === '--help' || first === '-h') return args;
  if (!(COMMANDS as readonly string[]).includes(first)) throw new Error(`unknown command "${first}"\n\n${USAGE}`);
  args.command = first as Command;
  while (rest.length > 0) {
    const a = rest.shift() ?? '';
    if (a === '--nodes') args.nodes = int(a, rest.shift());
    else if (a === '--port') args.port = int(a, rest.shift());
    else if (a === '--dir') args.dir = rest.shift() ?? '.cluster';
    else if (a === '--fixture') args.fixture = rest.shift() ?? null;
    else if (a === '--out') args.out = rest.shift() ?? null;
    else if (a === '--tsx') args.tsx = true;
    else if (a === '--redis-cluster') args.redisCluster = true;
    else if (a === '--store') {
      const v = rest.shift();
      if (v !== 'sqlite' && v !== 'cassandra') throw new Error(`--store takes sqlite or cassandra (got ${v ?? 'nothing'})`);
      args.store = v;
    } else if (a === '--cassandra-nodes') {
      const v = rest.shift();
      if (v !== '1' && v !== '3') throw new Error(`--cassandra-nodes takes 1 or 3 (got ${v ?? 'nothing'})`);
      args.cassandraNodes = Number(v) as 1 | 3;
    }
    else if (/^\d+$/.test(a) && args.index === null) args.index = Number(a);
    else throw new Error(`unexpected argument "${a}"\n\n${USAGE}`);
  }
  if ((args.command === 'restart-node' || args.command === 'kill-node') && args.index === null) throw new Error(`${args.command} needs a node number, e.g. \`${args.command} 2\``);
  if (args.command === 'compose-env' && args.out === null) throw new Error('compose-env needs --out <file> (for example --out .env)');
  return args;
}
