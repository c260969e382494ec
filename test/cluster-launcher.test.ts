/**
 * The cluster tooling (cluster/, docker-compose.cluster.yml): the HAProxy configurations pass
 * `haproxy -c`, the compose file sets only variables the node and the IdP read and names only
 * services it has, the environment the launcher gives each node passes the node's own
 * `loadConfig`, and a 2-node loopback cluster comes up behind HAProxy and goes away entirely.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../src/config/index.ts';
import { parseArgs } from '../cluster/lib/args.ts';
import { checkCompose, envNamesIn, haproxyServerHosts, loadCompose, parseDotenv } from '../cluster/lib/compose-check.ts';
import { renderComposeEnv } from '../cluster/lib/compose-env.ts';
import { idpSettings, nodeEnv, type Env } from '../cluster/lib/env.ts';
import { checkHaproxyConfig, renderHaproxyConfig } from '../cluster/lib/haproxy.ts';
import { COMPOSE_NODES, dockerHaproxyConfig } from '../cluster/lib/haproxy-docker.ts';
import { planLayout } from '../cluster/lib/layout.ts';
import { isAlive } from '../cluster/lib/procs.ts';
import { generateSecrets } from '../cluster/lib/secrets.ts';
import { startCluster } from '../cluster/lib/start.ts';
import { readState } from '../cluster/lib/state.ts';
import { stopCluster } from '../cluster/lib/stop.ts';
import { DEFAULT_FIXTURE } from '../src/config/index.ts';
import { assertDocumentedOutput, documentedTokenScript, runBash } from './helpers/readme-commands.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const has = (bin: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const HAPROXY = has('haproxy');
const NO_HAPROXY = 'haproxy is not installed (apt-get install -y haproxy; .ci/run installs it)';
const tmpDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'chat-cluster-launcher-'));

describe('HAProxy configuration', () => {
  test('the loopback configuration passes haproxy -c', { skip: HAPROXY ? false : NO_HAPROXY }, async () => {
    const dir = tmpDir();
    try {
      const layout = await planLayout(dir, 8080, 3);
      const cfg = renderHaproxyConfig({
        bind: `127.0.0.1:${layout.lbPort}`,
        statsBind: `127.0.0.1:${layout.statsPort}`,
        backends: layout.nodes.map((n) => ({ name: n.id, address: `127.0.0.1:${n.port}` })),
      });
      // What the brief of the balancer asks: readiness checks, long inactivity timeouts for SSE,
      // keep-alive (no http-server-close).
      assert.match(cfg, /uri \/readyz/);
      assert.match(cfg, /timeout tunnel 1h/);
      assert.match(cfg, /timeout server 5m/);
      assert.doesNotMatch(cfg, /http-server-close|httpclose/);
      assert.equal(haproxyServerHosts(cfg).length, 3);
      const file = path.join(dir, 'haproxy.cfg');
      fs.writeFileSync(file, cfg);
      const check = await checkHaproxyConfig(file);
      assert.ok(check.ok, check.output);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('cluster/haproxy.docker.cfg is what its generator renders, and passes haproxy -c', { skip: HAPROXY ? false : NO_HAPROXY }, async () => {
    const file = path.join(ROOT, 'cluster/haproxy.docker.cfg');
    assert.equal(fs.readFileSync(file, 'utf8'), dockerHaproxyConfig(), 'regenerate: npx tsx cluster/lib/haproxy-docker.ts > cluster/haproxy.docker.cfg');
    const check = await checkHaproxyConfig(file);
    assert.ok(check.ok, check.output);
  });
});

describe('docker-compose.cluster.yml', () => {
  const services = loadCompose(path.join(ROOT, 'docker-compose.cluster.yml'));
  const configDir = path.join(ROOT, 'src/config');
  const configSources = fs.readdirSync(configDir).filter((f) => f.endsWith('.ts')).map((f) => fs.readFileSync(path.join(configDir, f), 'utf8'));
  const chatNames = envNamesIn(configSources.join('\n'), 'CHAT_');
  const idpNames = envNamesIn(fs.readFileSync(path.join(ROOT, 'src/idp/main.ts'), 'utf8'), 'IDP_');
  const dotenv = parseDotenv(renderComposeEnv());
  const nodes = services.filter((s) => s.environment.CHAT_NODE_ID !== undefined);

  test('the names parsed from the sources are the real ones (the check below is not vacuous)', () => {
    for (const n of ['CHAT_PORT', 'CHAT_CLUSTER', 'CHAT_CLUSTER_SECRET', 'CHAT_CASSANDRA_CONTACT_POINTS', 'CHAT_IDP_DIRECTORY_KEY']) assert.ok(chatNames.has(n), n);
    for (const n of ['IDP_HOST', 'IDP_PORT', 'IDP_ISSUER', 'IDP_DEV_LOGIN', 'IDP_FIXTURE']) assert.ok(idpNames.has(n), n);
    assert.ok(!chatNames.has('CHAT_NO_SUCH_SETTING'));
  });

  test('every variable it sets is read by the node or the IdP, and every service it names exists', () => {
    const problems = checkCompose({ services, chatNames, idpNames, haproxyCfg: fs.readFileSync(path.join(ROOT, 'cluster/haproxy.docker.cfg'), 'utf8'), root: ROOT });
    assert.deepEqual(problems, []);
    for (const key of Object.keys(dotenv)) assert.ok(chatNames.has(key), `.env from compose-env: ${key} is not a node setting`);
  });

  test('scylla, redis, idp, three nodes and haproxy; the balancer knows exactly the nodes', () => {
    for (const s of ['scylla', 'redis', 'idp', 'haproxy', 'prometheus', 'grafana']) assert.ok(services.some((x) => x.name === s), s);
    assert.deepEqual(nodes.map((s) => s.name).sort(), [...COMPOSE_NODES].sort());
    assert.deepEqual(haproxyServerHosts(dockerHaproxyConfig()).sort(), [...COMPOSE_NODES, 'idp'].sort(), 'the nodes, and the IdP at /idp');
    assert.equal(new Set(nodes.map((s) => s.environment.CHAT_NODE_ID)).size, nodes.length, 'node ids are unique');
    const haproxy = services.find((s) => s.name === 'haproxy');
    assert.ok(haproxy?.volumes.some((v) => v.startsWith('./cluster/haproxy.docker.cfg:')));
    const scylla = services.find((s) => s.name === 'scylla');
    assert.match(String(scylla?.command), /--smp 1 --memory 750M --overprovisioned 1 --developer-mode 1/);
  });

  test('each node, with the .env compose-env writes, passes the node\'s loadConfig', () => {
    for (const s of nodes) {
      assert.deepEqual(s.envFile, ['.env'], s.name);
      const env: Env = { ...dotenv, ...s.environment };
      const cfg = loadConfig(env);
      assert.equal(cfg.cluster.mode, 'redis', s.name);
      assert.equal(cfg.store.driver, 'cassandra', s.name);
      assert.equal(cfg.idp.driver, 'http', s.name);
      if (cfg.cluster.mode === 'redis') assert.equal(cfg.cluster.internalUrl, `http://${s.name}:8090`, 'peers reach a node by its service name');
    }
  });
});

describe('the loopback launcher', () => {
  test('every node\'s environment passes loadConfig, shares the secrets and points at the balancer', async () => {
    const dir = tmpDir();
    try {
      const layout = await planLayout(dir, 8080, 3);
      const secrets = generateSecrets();
      const configs = layout.nodes.map((n) => loadConfig(nodeEnv(layout, n, secrets, idpSettings(DEFAULT_FIXTURE))));
      for (const [i, cfg] of configs.entries()) {
        assert.equal(cfg.publicBaseUrl, 'http://127.0.0.1:8080/api/v1', 'stream URLs must point at the balancer');
        assert.equal(cfg.store.driver === 'sqlite' && cfg.store.mode, 'shared-file');
        assert.equal(cfg.dataDir, path.join(dir, 'data'));
        assert.equal(cfg.webPush.vapidPublicKey, secrets.vapidPublicKey);
        assert.equal(cfg.idp.driver === 'http' && cfg.idp.directoryKey, 'dev-directory-key');
        assert.equal(cfg.cluster.mode, 'redis');
        if (cfg.cluster.mode === 'redis') {
          assert.equal(cfg.cluster.nodeId, `node-${i + 1}`);
          assert.equal(cfg.cluster.secret, secrets.clusterSecret);
        }
      }
      assert.equal(new Set(configs.flatMap((c) => [c.port, c.metricsPort])).size, 6, 'every node has ports of its own');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--store cassandra: every node\'s environment passes loadConfig and names the cluster\'s Cassandra', async () => {
    const layout = await planLayout('/x', 8080, 3, false, 'cassandra');
    assert.equal(layout.cassandraPort, 8100);
    const store = { driver: 'cassandra' as const, contactPoints: ['127.0.0.1:8100', '127.0.0.2:8100', '127.0.0.3:8100'], localDataCenter: 'datacenter1', keyspace: 'chat', replicationFactor: 3 };
    for (const n of layout.nodes) {
      const cfg = loadConfig(nodeEnv(layout, n, generateSecrets(), idpSettings(DEFAULT_FIXTURE), store));
      assert.deepEqual(cfg.store.driver === 'cassandra' && [cfg.store.contactPoints, cfg.store.localDataCenter, cfg.store.keyspace, cfg.store.replicationFactor], [store.contactPoints, 'datacenter1', 'chat', 3]);
    }
    assert.equal((await planLayout('/x', 8080, 3)).cassandraPort, null);
  });

  test('layout: fixed offsets from --port, random ports with 0, and bounds', async () => {
    const layout = await planLayout('/x', 8080, 2);
    assert.deepEqual([layout.lbPort, layout.statsPort, layout.idpPort, layout.redisPort], [8080, 8081, 8082, 8083]);
    assert.deepEqual(layout.nodes.map((n) => [n.id, n.port, n.internalPort, n.metricsPort]), [['node-1', 8181, 8281, 8381], ['node-2', 8182, 8282, 8382]]);
    const random = await planLayout('/x', 0, 2);
    assert.equal(new Set([random.lbPort, random.idpPort, ...random.nodes.map((n) => n.port)]).size, 4);
    await assert.rejects(planLayout('/x', 8080, 0), /--nodes/);
    await assert.rejects(planLayout('/x', 65500, 1), /--port/);
    // --redis-cluster: six Redis ports from port+3, their cluster bus ports 10000 above.
    const rc = await planLayout('/x', 8080, 2, true);
    assert.deepEqual(rc.redisCluster.map((r) => [r.port, r.busPort]), [[8083, 18083], [8084, 18084], [8085, 18085], [8086, 18086], [8087, 18087], [8088, 18088]]);
    await assert.rejects(planLayout('/x', 60000, 1, true), /--port/);
    const env = nodeEnv(rc, rc.nodes[0]!, generateSecrets(), idpSettings(DEFAULT_FIXTURE));
    assert.equal(env.CHAT_REDIS_CLUSTER_NODES, '127.0.0.1:8083,127.0.0.1:8084,127.0.0.1:8085,127.0.0.1:8086,127.0.0.1:8087,127.0.0.1:8088');
    assert.equal(env.CHAT_REDIS_URL, undefined);
    const cfg = loadConfig(env);
    assert.ok(cfg.cluster.mode === 'redis' && cfg.cluster.redisClusterNodes.length === 6);
  });

  test('command line', () => {
    assert.deepEqual(parseArgs(['up', '--nodes', '2', '--port', '9000']), { command: 'up', nodes: 2, port: 9000, dir: '.cluster', index: null, tsx: false, redisCluster: false, fixture: null, out: null, store: 'sqlite', cassandraNodes: 1 });
    assert.equal(parseArgs(['up', '--redis-cluster']).redisCluster, true);
    assert.deepEqual([parseArgs(['up', '--store', 'cassandra']).store, parseArgs(['up', '--store', 'cassandra', '--cassandra-nodes', '3']).cassandraNodes], ['cassandra', 3]);
    assert.throws(() => parseArgs(['up', '--store', 'mysql']), /sqlite or cassandra/);
    assert.throws(() => parseArgs(['up', '--cassandra-nodes', '2']), /1 or 3/);
    assert.equal(parseArgs(['restart-node', '2', '--dir', 'x']).index, 2);
    assert.throws(() => parseArgs(['kill-node']), /node number/);
    assert.throws(() => parseArgs(['launch']), /unknown command/);
    assert.throws(() => parseArgs(['up', '--nodes', 'many']), /whole number/);
  });
});

describe('missing programs', () => {
  const options = (dir: string) => ({ root: ROOT, dir, nodes: 1, port: 0, runtime: 'tsx' as const, fixturePath: DEFAULT_FIXTURE, launcherPid: null, log: () => {} });
  test('the launcher names what is missing and the command that installs it, before starting or writing anything', async () => {
    const dir = tmpDir();
    const bin = tmpDir();
    const saved = process.env.PATH;
    try {
      process.env.PATH = bin;
      await assert.rejects(startCluster(options(dir)), (err: Error) => {
        assert.equal(err.message, 'npm run cluster needs redis-server and haproxy: redis-server and haproxy are not installed (not found on PATH); install with: sudo apt-get install -y redis-server haproxy (Debian and Ubuntu packages of the same names; .ci/run installs them for CI)');
        return true;
      });
      assert.deepEqual(fs.readdirSync(dir), [], 'nothing written');
      // redis-server there, haproxy not: only haproxy is named.
      fs.writeFileSync(path.join(bin, 'redis-server'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      await assert.rejects(startCluster(options(dir)), /: haproxy is not installed \(not found on PATH\); install with: sudo apt-get install -y haproxy \(/);
      // The configuration check says the same when it cannot run haproxy.
      const check = await checkHaproxyConfig(path.join(dir, 'haproxy.cfg'));
      assert.equal(check.ok, false);
      assert.match(check.output, /^haproxy is not installed .*apt-get install -y haproxy/);
      assert.doesNotMatch(check.output, /ENOENT/);
    } finally {
      process.env.PATH = saved;
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});

const CAN_RUN = HAPROXY && has('redis-server');
const CURL_JQ = has('curl') && has('jq');
describe('a 2-node cluster end to end', { skip: CAN_RUN ? false : `${NO_HAPROXY}, or redis-server is missing` }, () => {
  test('comes up behind HAProxy, answers 200 through it from both nodes, and stops leaving no process', { timeout: 180_000 }, async () => {
    const dir = tmpDir();
    const lines: string[] = [];
    try {
      // tsx runtime: the test runs the sources as they are, without rebuilding the shared dist/.
      const { state } = await startCluster({ root: ROOT, dir, nodes: 2, port: 0, runtime: 'tsx', fixturePath: DEFAULT_FIXTURE, launcherPid: null, log: (l) => lines.push(l), readyTimeoutMs: 90_000 });
      const lb = `http://127.0.0.1:${state.layout.lbPort}`;
      const pids = Object.values(state.procs).map((p) => p.pid);
      assert.equal(pids.length, 5, 'redis, idp, 2 nodes, haproxy');
      try {
        for (let i = 0; i < 4; i++) {
          const res = await fetch(`${lb}/openapi.json`);
          assert.equal(res.status, 200);
          assert.equal(((await res.json()) as { openapi?: string }).openapi?.startsWith('3'), true);
        }
        assert.equal((await fetch(`${lb}/readyz`)).status, 200);
        // The IdP is at /idp behind the balancer, as on a single node, with that as its issuer.
        const discovery = (await (await fetch(`${lb}/idp/.well-known/openid-configuration`)).json()) as Record<string, string>;
        assert.equal(discovery.issuer, `${lb}/idp`);
        assert.equal(discovery.token_endpoint, `${lb}/idp/oauth/token`);
        if (CURL_JQ) {
          // The README's token commands, unchanged but for the port.
          const { stdout } = await runBash(documentedTokenScript(lb));
          assertDocumentedOutput(stdout);
        }
        // roundrobin: the balancer's request log shows both nodes served.
        const log = fs.readFileSync(path.join(dir, 'logs', 'haproxy.log'), 'utf8');
        assert.match(log, /chat_nodes\/node-1 .*openapi\.json/);
        assert.match(log, /chat_nodes\/node-2 .*openapi\.json/);
      } finally {
        await stopCluster(dir, { log: (l) => lines.push(l), stopLauncher: false });
      }
      for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} still runs`);
      assert.deepEqual(readState(dir)?.procs, {});
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlauncher log:\n${lines.join('\n')}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a 1-node cluster on a Redis Cluster end to end (--redis-cluster)', { skip: CAN_RUN ? false : `${NO_HAPROXY}, or redis-server is missing` }, () => {
  test('comes up with 3 Redis masters and 3 replicas, sends a message through HAProxy, and stops leaving no process', { timeout: 180_000 }, async () => {
    const dir = tmpDir();
    const lines: string[] = [];
    try {
      const { state } = await startCluster({ root: ROOT, dir, nodes: 1, port: 0, redisCluster: true, runtime: 'tsx', fixturePath: DEFAULT_FIXTURE, launcherPid: null, log: (l) => lines.push(l), readyTimeoutMs: 90_000 });
      const lb = `http://127.0.0.1:${state.layout.lbPort}`;
      const pids = Object.values(state.procs).map((p) => p.pid);
      assert.deepEqual(Object.keys(state.procs).sort(), ['haproxy', 'idp', 'node-1', 'redis-1', 'redis-2', 'redis-3', 'redis-4', 'redis-5', 'redis-6']);
      try {
        // The IdP answers at /idp behind the balancer (its issuer), as the README's commands use it.
        const token = (await (await fetch(`${lb}/idp/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'acme-support-backend', client_secret: 'acme-support-backend-secret' }) })).json()) as { access_token: string };
        const headers = { Authorization: `Bearer ${token.access_token}`, 'Content-Type': 'application/json' };
        const base = `${lb}/api/v1/tenants/acme/applications/support`;
        const created = await fetch(`${base}/conversations`, { method: 'POST', headers, body: JSON.stringify({ type: 'GROUP', name: 'launcher', member_user_ids: ['alice', 'bob'] }) });
        assert.equal(created.status, 201, await created.clone().text());
        const id = ((await created.json()) as { conversation_id: string }).conversation_id;
        const sent = await fetch(`${base}/conversations/${id}/messages`, { method: 'POST', headers, body: JSON.stringify({ body: 'over a Redis Cluster', actor_user_id: 'alice' }) });
        assert.equal(sent.status, 201, await sent.clone().text());
        const nodeLog = fs.readFileSync(path.join(dir, 'logs', 'node-1.log'), 'utf8');
        assert.match(nodeLog, /"msg":"chat node listening"/);
      } finally {
        await stopCluster(dir, { log: (l) => lines.push(l), stopLauncher: false });
      }
      for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} still runs`);
      assert.deepEqual(readState(dir)?.procs, {});
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlauncher log:\n${lines.join('\n')}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
