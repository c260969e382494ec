/**
 * A real Redis server for tests: `redis-server` started as a child process on a free loopback
 * port, keeping nothing on disk, stopped when the test is done. Tests never touch the machine's
 * own Redis on 6379.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { redisFactory, type RedisClient } from '../../src/redis/client.ts';
import { redisPing } from '../../cluster/lib/probes.ts';
import { freePort } from '../../cluster/lib/ports.ts';
import { reapOnExit } from './reaper.ts';

export { freePort };

export interface TestRedis {
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startTestRedis(): Promise<TestRedis> {
  const port = await freePort();
  const child = reapOnExit(
    spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${stderr}`);
    if (await redisPing(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not answer PING on ${port} within 10 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    child,
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      });
    },
  };
}

/**
 * One redis-server for the test file: started before its tests, stopped after them. Answers a
 * getter (the server exists only once `before` has run).
 */
export function useTestRedis(): () => TestRedis {
  let server: TestRedis | null = null;
  before(async () => {
    server = await startTestRedis();
  });
  after(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('the test redis-server is not started yet (use it inside a test)');
    return server;
  };
}

/** A connection as a node opens it; for tests that expect failures, so errors are not logged. */
export function quietConnection(url: string, keyPrefix: string, name: string): RedisClient {
  const redis = redisFactory({ url, keyPrefix })(name);
  redis.on('error', () => {});
  return redis;
}

const maxClientsBefore = new WeakMap<object, string>();

/**
 * Makes one Redis refuse every new connection (maxclients lowered to the connections it has),
 * or, with `false`, take them again (maxclients as before). The connections it has keep working.
 */
export async function refuseNewConnections(redis: RedisClient, refuse: boolean): Promise<void> {
  if (refuse) {
    const [, before] = (await redis.config('GET', 'maxclients')) as [string, string];
    maxClientsBefore.set(redis, before);
    const connected = Number(/connected_clients:(\d+)/.exec(String(await redis.info('clients')))?.[1]);
    await redis.config('SET', 'maxclients', String(connected));
  } else {
    await redis.config('SET', 'maxclients', maxClientsBefore.get(redis) ?? '10000');
  }
}
