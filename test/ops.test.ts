/**
 * Operating a node: health and readiness, Prometheus metrics with bounded labels, request ids,
 * the 404 outside the API, graceful stop on SIGTERM, refusing a wrong configuration, and the
 * VAPID key that must survive restarts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import webpush from 'web-push';
import { ROUTES } from '../src/api/routes/index.ts';
import { IDP_ROUTES } from '../src/idp/http-routes.ts';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CAPS_TEMPLATE = '/tenants/{tenant_id}/applications/{application_id}/me/capabilities';

let node: TestNode;
let bob: string;

before(async () => {
  node = await startTestNode();
  bob = await userToken(node.idp, 'bob');
});
after(async () => {
  await node.stop();
  fs.rmSync(node.dataDir, { recursive: true, force: true });
});

const api = (p: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Res> => request(`${node.api}${p}`, { method, headers });

describe('health', () => {
  test('/healthz and /readyz answer 200', async () => {
    const health = await request(`${node.origin}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(health.json(), { status: 'ok' });
    const ready = await request(`${node.origin}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.json(), { status: 'ready' });
  });
});

describe('metrics', () => {
  test('request count and duration are labelled by route template, never by a concrete id', async () => {
    const marker = `zz${Date.now().toString(36)}`;
    assert.equal((await api('/tenants/acme/applications/support/me/capabilities', bearer(bob))).status, 200);
    await api(`/tenants/${marker}-t/applications/${marker}-a/me/capabilities`, bearer(bob));
    await api(`/tenants/${marker}-t/applications/${marker}-a/me/capabilities`);
    await api(`/tenants/${marker}-t/me/capabilities`, bearer(bob));
    await api(`/${marker}-unknown/path`);
    await api(`/tenants/${marker}-t/me/capabilities`, { Origin: 'http://localhost:3000', 'Access-Control-Request-Method': 'GET' }, 'OPTIONS');
    await api(`/tenants/acme/applications/support/me/capabilities`, bearer(bob), 'DELETE');
    await request(`${node.idp}/${marker}-unknown`);

    const res = await request(`http://127.0.0.1:${node.metricsPort}/metrics`);
    assert.equal(res.status, 200);
    const text = res.text;
    assert.ok(!text.includes(marker), 'no id from a request path appears in the metrics');

    const series = text.split('\n').filter((l) => /^chat_http_request(s_total|_duration_seconds_(bucket|sum|count))\{/.test(l));
    const routes = new Set(series.map((l) => /route="([^"]*)"/.exec(l)?.[1]));
    const templates = new Set([...ROUTES.map((r) => r.path), ...IDP_ROUTES.map((r) => `/idp${r.path}`), 'unmatched']);
    for (const r of routes) assert.ok(r !== undefined && templates.has(r), `route label "${String(r)}" is not a route template`);
    // The embedded IdP's requests are counted too: the tokens of `before` came from it.
    for (const [method, route] of [['POST', '/idp/dev/login'], ['POST', '/idp/oauth/token']]) {
      assert.ok(series.some((l) => l.startsWith('chat_http_requests_total{') && l.includes(`route="${route}"`) && l.includes(`method="${method}"`) && l.includes('status="200"')), `${method} ${route}`);
    }

    const ok = series.find((l) => l.startsWith('chat_http_requests_total{') && l.includes(`route="${CAPS_TEMPLATE}"`) && l.includes('status="200"'));
    assert.ok(ok, `no chat_http_requests_total for ${CAPS_TEMPLATE} 200 in\n${series.join('\n')}`);
    assert.match(ok, /method="GET"/);
    assert.ok(Number(ok.split(' ').at(-1)) >= 1);
    for (const status of ['401', '403', '405']) {
      assert.ok(series.some((l) => l.startsWith('chat_http_requests_total{') && l.includes(`route="${CAPS_TEMPLATE}"`) && l.includes(`status="${status}"`)), `status ${status}`);
    }
    assert.ok(series.some((l) => l.startsWith('chat_http_requests_total{') && l.includes('route="unmatched"') && l.includes('status="404"')));
    for (const suffix of ['bucket', 'sum', 'count']) {
      assert.ok(series.some((l) => l.startsWith(`chat_http_request_duration_seconds_${suffix}{`) && l.includes(`route="${CAPS_TEMPLATE}"`)), suffix);
    }
    assert.match(text, /^# TYPE chat_http_requests_total counter$/m);
    assert.match(text, /^# TYPE chat_http_request_duration_seconds histogram$/m);
    // The embedded store of a single node (exclusive mode) memoizes access checks, and says so.
    assert.match(text, /^# TYPE chat_store_memo_requests_total counter$/m);
    // Its group commits: a histogram whose count is the commits made, and the writes they carried.
    assert.match(text, /^# TYPE chat_store_group_commit_seconds histogram$/m);
    const commits = Number(/^chat_store_group_commit_seconds_count (\d+)$/m.exec(text)?.[1]);
    assert.ok(commits >= 1, 'the node committed (its tenant fixtures, profiles) by now');
    assert.equal(Number(/^chat_store_group_commit_seconds_bucket\{le="\+Inf"\} (\d+)$/m.exec(text)?.[1]), commits);
    const committed = Number(/^chat_store_write_ops_total\{outcome="committed"\} (\d+)$/m.exec(text)?.[1]);
    assert.ok(committed >= commits, `${committed} writes in ${commits} commits`);
    assert.match(text, /^chat_store_write_ops_total\{outcome="failed"\} \d+$/m);
    assert.match(text, /^chat_store_group_commit_retries_total \d+$/m);
    assert.match(text, /^chat_store_writes_in_flight \d+$/m);
    // The actor host's counters and the bus's delivery problems, at zero or more.
    for (const name of ['chat_actor_activations_total', 'chat_actor_passivations_total', 'chat_actor_fenced_total', 'chat_actor_event_publish_failures_total', 'chat_push_jobs_dropped_total']) {
      assert.match(text, new RegExp(`^# TYPE ${name} counter$`, 'm'), name);
      assert.match(text, new RegExp(`^${name} \\d+$`, 'm'), name);
    }
    assert.match(text, /^chat_actors \d+$/m);
    assert.match(text, /^# TYPE chat_bus_listener_errors_total counter$/m);
  });

  test('the metrics port serves only /metrics', async () => {
    assert.equal((await request(`http://127.0.0.1:${node.metricsPort}/`)).status, 404);
    assert.equal((await request(`http://127.0.0.1:${node.metricsPort}/api/v1/me`)).status, 404);
  });
});

describe('request ids and server header', () => {
  test('a sane incoming X-Request-Id is echoed, on success and on error', async () => {
    for (const id of ['abc-123', 'trace.42:span_7', 'x'.repeat(128)]) {
      assert.equal((await api('/tenants/acme/applications/support/me/capabilities', { ...bearer(bob), 'X-Request-Id': id })).headers['x-request-id'], id);
      assert.equal((await api('/tenants/acme/applications/support/me/capabilities', { 'X-Request-Id': id })).headers['x-request-id'], id);
    }
  });

  test('without one, or with one that is not sane, a fresh id is generated', async () => {
    const seen = new Set<string>();
    const cases: Record<string, string>[] = [{}, {}, { 'X-Request-Id': 'has space' }, { 'X-Request-Id': 'x'.repeat(129) }, { 'X-Request-Id': 'a/b' }, { 'X-Request-Id': '<script>' }];
    for (const headers of cases) {
      const id = (await api('/notifications/vapid-public-key', headers)).headers['x-request-id'];
      assert.equal(typeof id, 'string');
      assert.match(id as string, /^[\w.:-]{1,128}$/);
      assert.ok(!seen.has(id as string), 'ids are unique');
      seen.add(id as string);
    }
    assert.match(String((await api('/nope')).headers['x-request-id']), /^[\w.:-]+$/, 'also on a 404 inside the API');
  });

  test('responses carry the uWebSockets server header', async () => {
    assert.equal((await api('/notifications/vapid-public-key')).headers.uwebsockets, '20');
    assert.equal((await api('/me')).headers.uwebsockets, '20');
  });
});

test('an unknown path outside /api/v1 is a 404 with the error body, saying what this node serves; / leads to the web app', async () => {
  const root = await request(`${node.origin}/`);
  assert.equal(root.status, 302);
  assert.equal(root.headers.location, '/app/');
  for (const p of ['/nope', '/api/v2/me', '/api', '/application']) {
    const body = assertErrorBody(await request(`${node.origin}${p}`), 404, 'not_found', p);
    assert.equal(body.message, `no route for GET ${p}: this node serves the API under /api/v1/ (${node.api}), /openapi.json, /healthz and /readyz, the web app under /app/, and the development identity provider under /idp/`);
  }
  assertErrorBody(await request(`${node.origin}/nope?x=1`, { method: 'POST' }), 404, 'not_found', '/nope');
});

test('the OpenAPI document is served at /openapi.json beside /healthz (the checked-in file, any origin), not as an API operation', async () => {
  const res = await request(`${node.origin}/openapi.json`, { headers: { Origin: 'https://explorer.example' } });
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.headers['access-control-allow-origin'], '*');
  assert.deepEqual(res.json(), JSON.parse(fs.readFileSync(path.join(ROOT, 'schema/openapi.json'), 'utf8')));
  assertErrorBody(await api('/openapi.json'), 404, 'not_found', '/api/v1/openapi.json');
});

describe('process lifecycle', () => {
  test('SIGTERM stops the node: exit code 0, "chat node stopped" logged', async () => {
    const n = await startTestNode();
    const closed = once(n.child, 'close');
    assert.equal(await n.stop('SIGTERM'), 0);
    await closed;
    const msgs = n.lines.map((l) => (JSON.parse(l) as { msg?: string }).msg);
    // Order not asserted: src/main.ts exits without flushing pino's asynchronous stdout, so the
    // last two lines can come out swapped.
    assert.ok(msgs.includes('shutting down'), msgs.join(', '));
    assert.ok(msgs.includes('chat node stopped'), msgs.join(', '));
    fs.rmSync(n.dataDir, { recursive: true, force: true });
  });

  test('SIGTERM stops a node whose log pipe is gone (its parent stopped reading): it exits, it does not hang', async () => {
    const n = await startTestNode({ CHAT_SHUTDOWN_GRACE_MS: '200' });
    // The reading end of the node's stdout closes, as when the process it logged to has died:
    // a log line written now fails with EPIPE, and pino's flush never calls back.
    n.child.stdout!.destroy();
    const t0 = Date.now();
    const closed = once(n.child, 'close');
    n.child.kill('SIGTERM');
    const timer = setTimeout(() => n.child.kill('SIGKILL'), 30_000);
    await closed;
    clearTimeout(timer);
    assert.equal(n.child.signalCode, null, 'the node had to be killed: SIGTERM did not stop it');
    assert.ok(Date.now() - t0 < 10_000, `stopped after ${Date.now() - t0} ms`);
    fs.rmSync(n.dataDir, { recursive: true, force: true });
  });

  test('a second SIGTERM ends a stop at once', async () => {
    const n = await startTestNode();
    const closed = once(n.child, 'close');
    n.child.kill('SIGTERM');
    n.child.kill('SIGTERM');
    await closed;
    assert.equal(n.child.signalCode, null);
    assert.ok(n.child.exitCode === 0 || n.child.exitCode === 1, String(n.child.exitCode));
    fs.rmSync(n.dataDir, { recursive: true, force: true });
  });

  test('a wrong configuration stops the process at start with exit code 2 and one line per problem', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: { ...process.env, CHAT_PORT: 'abc', CHAT_LOG_LEVEL: 'loud', CHAT_METRICS_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
    const [code] = (await once(child, 'close')) as [number | null];
    clearTimeout(timer);
    assert.equal(code, 2, `stderr: ${stderr}`);
    const lines = stderr.split('\n');
    assert.ok(lines.some((l) => /CHAT_PORT/.test(l) && /abc/.test(l)), stderr);
    assert.ok(lines.some((l) => /CHAT_LOG_LEVEL/.test(l) && /loud/.test(l)), stderr);
    assert.equal(lines.filter((l) => /CHAT_PORT|CHAT_LOG_LEVEL/.test(l)).length, 2, 'one line per problem');
    assert.doesNotMatch(stdout, /listening/);
  });
});

describe('VAPID key', () => {
  const vapidKey = async (n: TestNode): Promise<string> => {
    const res = await request(`${n.api}/notifications/vapid-public-key`);
    assert.equal(res.status, 200);
    return (res.json() as { public_key: string }).public_key;
  };

  test('a generated key is persisted: a node restarted on the same data directory serves the same key', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-vapid-'));
    try {
      const first = await startTestNode({ CHAT_DATA_DIR: dataDir });
      const key = await vapidKey(first);
      await first.stop();
      assert.match(key, /^[A-Za-z0-9_-]{80,}$/);
      const file = path.join(dataDir, 'vapid.json');
      assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the private key file is readable by its owner only');
      const second = await startTestNode({ CHAT_DATA_DIR: dataDir });
      try {
        assert.equal(await vapidKey(second), key);
      } finally {
        await second.stop();
      }
      // Another data directory means another key.
      assert.notEqual(await vapidKey(node), key);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('with web push off the key is empty; configured keys are served as given', async () => {
    const configured = webpush.generateVAPIDKeys();
    const [off, fixed] = await Promise.all([
      startTestNode({ CHAT_WEB_PUSH: 'false' }),
      startTestNode({ CHAT_VAPID_PUBLIC_KEY: configured.publicKey, CHAT_VAPID_PRIVATE_KEY: configured.privateKey }),
    ]);
    try {
      assert.equal(await vapidKey(off), '');
      assert.equal(await vapidKey(fixed), configured.publicKey);
      assert.ok(!fs.existsSync(path.join(fixed.dataDir, 'vapid.json')), 'configured keys are not written to disk');
    } finally {
      await Promise.all([off.stop(), fixed.stop()]);
      for (const n of [off, fixed]) fs.rmSync(n.dataDir, { recursive: true, force: true });
    }
  });
});
