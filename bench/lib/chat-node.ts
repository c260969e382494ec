/**
 * The chat node as the benches run it: the esbuild bundle `npm start` runs, with the embedded IdP,
 * rate limits raised out of reach (a bench measures the limiter's cost, not its refusals) and no
 * CHAT_* setting inherited from the caller, so runs are comparable.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const UNREACHABLE_RATE = '1000000000/60s';

export function buildNode(log: (line: string) => void): void {
  log('building dist/ (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: path.resolve(import.meta.dirname, '../..'), stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * The benched node's environment. `BENCH_CHAT_<NAME>=value` sets `CHAT_<NAME>` for it, to compare
 * settings (e.g. `BENCH_CHAT_SQLITE_WRITER=inline`); it cannot change what the bench itself fixes
 * below (port, data dir, IdP, rate limits).
 */
export function nodeEnv(port: number, dataDir: string): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('BENCH_CHAT_')) env[name.slice('BENCH_'.length)] = value;
    else if (!name.startsWith('CHAT_')) env[name] = value;
  }
  return {
    ...env,
    CHAT_HOST: '127.0.0.1',
    CHAT_PORT: String(port),
    CHAT_METRICS_PORT: '0',
    CHAT_LOG_LEVEL: 'warn',
    CHAT_DATA_DIR: dataDir,
    CHAT_IDP: 'embedded',
    CHAT_IDP_DEV_LOGIN: 'true',
    CHAT_RATE_CLIENT: UNREACHABLE_RATE,
    CHAT_RATE_SEND: UNREACHABLE_RATE,
    CHAT_RATE_LOOKUP: UNREACHABLE_RATE,
    CHAT_SHUTDOWN_GRACE_MS: '1000',
  };
}
