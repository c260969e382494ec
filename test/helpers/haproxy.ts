/**
 * HAProxy for tests: the configuration `npm run cluster` runs (cluster/lib/haproxy.ts), on a free
 * loopback port in front of the given backends, checked with `haproxy -c`, started in the
 * foreground and stopped by the test.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkHaproxyConfig, renderHaproxyConfig, type HaproxyBackend } from '../../cluster/lib/haproxy.ts';
import { freePort } from '../../cluster/lib/ports.ts';
import { reapOnExit } from './reaper.ts';

/** Skip reason for tests that need haproxy, or false when it is installed. */
export const NO_HAPROXY: string | false = ((): string | false => {
  try {
    execFileSync('sh', ['-c', 'command -v haproxy'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'haproxy is not installed (apt-get install -y haproxy; .ci/run installs it)';
  }
})();

export interface TestHaproxy {
  port: number;
  origin: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts HAProxy in front of `backends` (host:port) and waits until a request through it reaches one. */
export async function startHaproxy(backends: HaproxyBackend[]): Promise<TestHaproxy> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-haproxy-'));
  const file = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(file, renderHaproxyConfig({ bind: `127.0.0.1:${port}`, statsBind: null, backends }));
  const check = await checkHaproxyConfig(file);
  if (!check.ok) throw new Error(`haproxy rejects the configuration:\n${check.output}`);
  let output = '';
  const child = reapOnExit(spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] }));
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const origin = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // Ready once its health checks (every second) found a backend up.
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output}`);
    const ok = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`haproxy found no backend up in 20 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, origin, child, stop };
}
