/**
 * Test processes: a chat node or a standalone IdP started as a real child process on a random
 * loopback port, stopped (SIGTERM, then SIGKILL) when the test is done.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { reapOnExit } from './reaper.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Proc {
  child: ChildProcess;
  /** Every stdout line seen so far (JSON log lines for the node). */
  lines: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

function start(script: string, env: Record<string, string>, readyWhen: (obj: Record<string, unknown>) => boolean, timeoutMs = 60_000): Promise<{ proc: Proc; ready: Record<string, unknown> }> {
  const child = reapOnExit(
    spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const proc: Proc = {
    child,
    lines,
    stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      return new Promise((resolve) => {
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', (code) => {
          clearTimeout(t);
          resolve(code);
        });
        child.kill(signal);
      });
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not become ready in ${timeoutMs / 1000} s\nstderr: ${stderr}\nstdout: ${lines.join('\n')}`));
    }, timeoutMs);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const obj = JSON.parse(line) as Record<string, unknown>;
        if (readyWhen(obj)) {
          clearTimeout(timer);
          resolve({ proc, ready: obj });
        }
      } catch {
        /* not JSON */
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before it was ready\nstderr: ${stderr}`));
    });
  });
}

export interface TestNode extends Proc {
  port: number;
  metricsPort: number;
  origin: string;
  api: string;
  idp: string;
  dataDir: string;
}

/** `timeoutMs`: until the node logs that it listens (a node on Cassandra may first create its keyspace). */
export async function startTestNode(env: Record<string, string> = {}, timeoutMs?: number): Promise<TestNode> {
  const dataDir = env.CHAT_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'chat-node-'));
  const { proc, ready } = await start(
    'src/main.ts',
    { CHAT_PORT: '0', CHAT_METRICS_PORT: '0', CHAT_LOG_LEVEL: 'info', CHAT_DATA_DIR: dataDir, ...env },
    (o) => o.msg === 'chat node listening',
    timeoutMs,
  );
  const port = ready.port as number;
  const origin = `http://127.0.0.1:${port}`;
  return { ...proc, port, metricsPort: ready.metrics_port as number, origin, api: `${origin}/api/v1`, idp: `${origin}/idp`, dataDir };
}

export interface TestIdp extends Proc {
  port: number;
  url: string;
  /** Where it keeps its signing keys (a temp directory unless IDP_DATA_DIR is given). */
  dataDir: string;
}

export async function startTestIdp(env: Record<string, string> = {}): Promise<TestIdp> {
  const dataDir = env.IDP_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'chat-idp-'));
  const { proc, ready } = await start('src/idp/main.ts', { IDP_PORT: '0', IDP_DATA_DIR: dataDir, ...env }, (o) => o.msg === 'idp listening');
  const port = ready.port as number;
  return { ...proc, port, url: `http://127.0.0.1:${port}`, dataDir };
}

/**
 * A loopback port free right now, for a process that must later be restarted on the same port.
 * (uWS sets SO_REUSEADDR only when given a fixed port: a server started with port 0 leaves
 * TIME_WAIT sockets behind that block its port for a minute after it stops.)
 */
export { freePort } from '../../cluster/lib/ports.ts';
