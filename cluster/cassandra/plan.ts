/**
 * Where the nodes of a run live: addresses, ports, tokens, directories; and the state file
 * `<dataDir>/cassandra.json` that lets any later command (`npm run cassandra -- status|down`)
 * find and stop them by pid.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ringTokens, type NodePlan } from './config.ts';

export const MAX_NODES = 3;

/** Free on every address at once (the ring's nodes share the CQL and internode ports). */
function freeOnAll(port: number, addresses: readonly string[]): Promise<boolean> {
  return addresses.reduce<Promise<boolean>>(
    async (ok, address) =>
      (await ok) &&
      new Promise<boolean>((resolve) => {
        const srv = net.createServer();
        srv.once('error', () => resolve(false));
        srv.listen(port, address, () => srv.close(() => resolve(true)));
      }),
    Promise.resolve(true),
  );
}

function kernelPort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, address, () => {
      const a = srv.address();
      srv.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

async function pickPort(addresses: readonly string[], taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await kernelPort(addresses[0]!);
    if (!taken.has(port) && (await freeOnAll(port, addresses))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no port free on ${addresses.join(', ')} after 50 tries`);
}

/**
 * With a fixed CQL port N (the CLI, the cluster launcher), every port is fixed too: internode
 * N+1, JMX N+2+i; a node restarted on the same data then finds its ring where it left it.
 * Without one, every port is picked free (tests).
 */
export async function planNodes(dataDir: string, count: number, nativePort?: number): Promise<NodePlan[]> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_NODES) throw new Error(`nodes must be 1 to ${MAX_NODES} (got ${count})`);
  const addresses = Array.from({ length: count }, (_, i) => `127.0.0.${i + 1}`);
  const taken = new Set<number>();
  let native: number;
  let storage: number;
  let jmx: number[];
  if (nativePort === undefined || nativePort === 0) {
    native = await pickPort(addresses, taken);
    storage = await pickPort(addresses, taken);
    jmx = [];
    for (let i = 0; i < count; i += 1) jmx.push(await pickPort(['127.0.0.1'], taken));
  } else {
    [native, storage, jmx] = [nativePort, nativePort + 1, Array.from({ length: count }, (_, i) => nativePort + 2 + i)];
    const busy: number[] = [];
    for (const port of [native, storage]) if (!(await freeOnAll(port, addresses))) busy.push(port);
    for (const port of jmx) if (!(await freeOnAll(port, ['127.0.0.1']))) busy.push(port);
    if (busy.length > 0) throw new Error(`Cassandra's ports ${busy.join(', ')} are taken (CQL ${native}, internode ${storage}, JMX ${jmx.join(', ')}); pick another CQL port`);
  }
  const tokens = ringTokens(count);
  return addresses.map((address, i) => ({ index: i, address, nativePort: native, storagePort: storage, jmxPort: jmx[i]!, token: tokens[i]!, dir: path.join(dataDir, `node${i + 1}`) }));
}

export interface NodeState extends NodePlan {
  pid: number | null;
  marker: string;
  logFile: string;
}

export interface CassandraState {
  version: 1;
  cassandraVersion: string;
  dataDir: string;
  contactPoints: string[];
  localDataCenter: string;
  /** The process that owns the JVMs (kills them when it ends), or null: they outlive it (CLI). */
  ownerPid: number | null;
  nodes: NodeState[];
}

export const stateFile = (dataDir: string): string => path.join(dataDir, 'cassandra.json');

export function readState(dataDir: string): CassandraState | null {
  try {
    const s = JSON.parse(fs.readFileSync(stateFile(dataDir), 'utf8')) as CassandraState;
    if (s.version !== 1) throw new Error(`${stateFile(dataDir)}: unknown version ${String(s.version)}`);
    return s;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Written to a temporary file and renamed: a reader never sees half a file. */
export function writeState(state: CassandraState): void {
  const file = stateFile(state.dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(tmp, file);
}
