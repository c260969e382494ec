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
  fixture: string | null;
  /** compose-env: the file to write */
  out: string | null;
}

export const USAGE = `usage: npm run cluster -- <command> [options]

  up [--nodes 3] [--port 8080] [--dir .cluster] [--tsx] [--fixture <file>]
        start Redis, the IdP, N nodes and HAProxy on loopback; stay in the foreground;
        Ctrl-C (or SIGTERM) stops everything, nodes first
  down [--dir .cluster]            stop the cluster of that directory
  status [--dir .cluster]          list its processes and whether they run
  restart-node <i> [--dir .cluster]  drain node i (SIGTERM) and start it again
  kill-node <i> [--dir .cluster]   SIGKILL node i (a crash, for demos)
  compose-env --out .env           write fresh shared secrets for docker-compose.cluster.yml

  --tsx    run the nodes and the IdP from src/ through tsx instead of the dist/ bundle
`;

const COMMANDS: readonly Command[] = ['up', 'down', 'status', 'restart-node', 'kill-node', 'compose-env', 'help'];

function int(flag: string, raw: string | undefined): number {
  if (raw === undefined || !/^\d+$/.test(raw)) throw new Error(`${flag} needs a whole number (got ${raw ?? 'nothing'})`);
  return Number(raw);
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { command: 'help', nodes: 3, port: 8080, dir: '.cluster', index: null, tsx: false, fixture: null, out: null };
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
    else if (/^\d+$/.test(a) && args.index === null) args.index = Number(a);
    else throw new Error(`unexpected argument "${a}"\n\n${USAGE}`);
  }
  if ((args.command === 'restart-node' || args.command === 'kill-node') && args.index === null) throw new Error(`${args.command} needs a node number, e.g. \`${args.command} 2\``);
  if (args.command === 'compose-env' && args.out === null) throw new Error('compose-env needs --out <file> (for example --out .env)');
  return args;
}
