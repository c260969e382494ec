/**
 * The `edge` scenario: what the chat node's HTTP edge costs, against the cheapest possible server.
 *
 * A real node (embedded IdP, temp data dir) answers an authenticated
 * GET /api/v1/tenants/acme/applications/support/me/capabilities; a bare uWebSockets.js server
 * answers the same request with the same body bytes. Both are loaded with the same wrk settings;
 * the goal is node req/s >= 0.6 x bare req/s.
 *
 * The node runs with its rate limits raised out of reach (the bench measures the limiter's cost,
 * not its refusals) and with no CHAT_* setting inherited from the caller, so runs are comparable.
 * The user token lives 10 minutes; the run refuses settings that would not finish well before.
 */
import { buildNode, nodeEnv } from './lib/chat-node.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBare, type BareServer } from './lib/bare.ts';
import { checkOnce, compareTargets, pairFigures, plannedSeconds } from './lib/compare.ts';
import { devUserToken } from './lib/dev-token.ts';
import { BenchError } from './lib/errors.ts';
import { freePort, onExit, startTsx, type ManagedProcess } from './lib/processes.ts';
import { goal, type Scenario } from './lib/scenario.ts';

const ROUTE = '/api/v1/tenants/acme/applications/support/me/capabilities';
/** Time the run may take besides the measured load: start-ups, checks, margin. */
const OVERHEAD_SECONDS = 60;
const TOKEN_LIFETIME_SECONDS = 600;

export const scenario: Scenario = {
  name: 'edge',
  description: 'authenticated GET through the chat node vs a bare uWS server with the same body (goal: ratio >= 0.6)',
  async run(settings, log) {
    const planned = plannedSeconds(2, settings);
    if (planned + OVERHEAD_SECONDS > TOKEN_LIFETIME_SECONDS * 0.8) {
      throw new BenchError(`edge: ${planned}s of load would outlive the 10-minute user token; lower BENCH_SECONDS, BENCH_ROUNDS or BENCH_WARMUP_SECONDS`);
    }

    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-edge-'));
    const removeDataDir = onExit(() => rmSync(dataDir, { recursive: true, force: true }));
    let node: ManagedProcess | undefined;
    let bare: BareServer | undefined;
    try {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      log(`starting the chat node on ${base} (data in ${dataDir})`);
      buildNode(log);
      node = await startTsx({ name: 'chat-node', file: 'dist/main.mjs', env: nodeEnv(port, dataDir), readyUrl: `${base}/readyz`, timeoutMs: 60_000 });

      const access = await devUserToken({ idpBaseUrl: `${base}/idp`, userId: 'bob', clientId: 'acme-support-web', clientSecret: 'acme-support-web-secret' });
      const deadline = access.expiresAt ?? Date.now() + TOKEN_LIFETIME_SECONDS * 1000;
      if (Date.now() + (planned + 30) * 1000 > deadline) {
        throw new BenchError(`edge: the access token expires in ${Math.round((deadline - Date.now()) / 1000)}s, before the ${planned}s run would end`);
      }
      const headers = { Authorization: `Bearer ${access.token}` };
      const nodeTarget = { name: 'node', url: base + ROUTE, headers, pid: node.child.pid };
      const body = await checkOnce(nodeTarget);
      log(`${ROUTE} answered ${body.length} bytes; starting the bare server with the same body`);

      bare = await startBare('bare-server', body);
      const bareTarget = { name: 'bare', url: bare.baseUrl + ROUTE, headers, pid: bare.process.child.pid };
      if (!(await checkOnce(bareTarget)).equals(body)) throw new BenchError('edge: the bare server does not answer the same bytes as the node');

      const measurements = await compareTargets([nodeTarget, bareTarget], settings, log);
      const figures: Record<string, number> = { ...pairFigures(measurements, 'node', 'bare'), body_bytes: body.length };
      return {
        measurements,
        figures,
        goals: [goal('ratio', figures.ratio!, '>=', 0.6)],
        notes: [
          `ratio = node req/s / bare req/s; both on this machine (${os.cpus().length} CPUs) with wrk -t1 -c${settings.connections}`,
          'node_cpu_us_per_req / bare_cpu_us_per_req: CPU time (user + system, /proc) of each server process over the measured rounds, per request: the steadier figure on a shared machine',
        ],
      };
    } finally {
      await Promise.all([node?.stop(), bare?.process.stop()]);
      removeDataDir();
    }
  },
};
