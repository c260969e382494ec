/** Starts bench/bare-server.ts answering `body` and returns its base URL. */
import { BenchError } from './errors.ts';
import { startTsx, type ManagedProcess } from './processes.ts';

export interface BareServer {
  baseUrl: string;
  process: ManagedProcess;
}

export async function startBare(name: string, body: Buffer): Promise<BareServer> {
  const text = body.toString('utf8');
  // The body travels through an environment variable, so it must survive as UTF-8 text.
  if (!Buffer.from(text, 'utf8').equals(body)) throw new BenchError(`${name}: the body to serve is not valid UTF-8`);
  const proc = await startTsx({
    name,
    file: 'bench/bare-server.ts',
    env: { PATH: process.env.PATH, BARE_PORT: '0', BARE_BODY: text },
    readyLine: (line) => line.startsWith('{"port":'),
  });
  const port = (JSON.parse(proc.readyLine ?? '{}') as { port?: unknown }).port;
  if (typeof port !== 'number') {
    await proc.stop();
    throw new BenchError(`${name}: unexpected first line ${proc.readyLine}`);
  }
  return { baseUrl: `http://127.0.0.1:${port}`, process: proc };
}
