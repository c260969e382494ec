/** Shared by the sharding tests: a real redis-server per file, and polling for a condition. */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { redisFactory, type RedisFactory } from '../../src/redis/client.ts';
import type { ShardingLog } from '../../src/sharding/types.ts';
import { reapOnExit } from '../helpers/reaper.ts';

export function factoryFor(url: string): RedisFactory {
  // Tests stop redis-server while nodes run: fail commands fast instead of retrying for seconds.
  return redisFactory({ url, keyPrefix: '' }, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
}

/** A key prefix per test, so tests sharing one redis-server never see each other's nodes. */
export function prefix(): string {
  return `test-${randomUUID().slice(0, 8)}:`;
}

/** Polls `check` every 20 ms until it holds; fails with `what` after `ms`. Answers the time taken. */
export async function until(what: string, check: () => boolean, ms: number): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

/** Collects warnings so a test can print them when it fails; info is dropped. */
export function testLog(): ShardingLog & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info: () => {}, warn: (details, message) => warnings.push(`${message} ${JSON.stringify(details)}`) };
}

/** A redis-server on a given port (to bring one back where it was stopped); stop() ends it. */
export async function redisOnPort(port: number): Promise<{ stop(): Promise<void> }> {
  const child = reapOnExit(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' }));
  const stop = (): Promise<void> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => (sock.end(), resolve(true)));
      sock.once('error', () => resolve(false));
    });
    if (up) return { stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not come back on ${port}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
