/**
 * The Grafana dashboard (cluster/grafana/dashboards/chat-node.json), validated against what a
 * node really exports: every query parses as PromQL (the Prometheus project's own grammar), every
 * metric it selects is in a real node's scrape (a node in cluster mode on a real Redis, after a
 * send, a rate-limit refusal and a push job; Cassandra's from the driver client's real metrics
 * registration), with the labels the query filters and groups by, and the route templates it
 * names are real ones. Also: the provisioning wires the datasource the panels name, and
 * Prometheus scrapes exactly the compose file's nodes.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import cassandra from 'cassandra-driver';
import { parser } from '@prometheus-io/lezer-promql';
import { Registry } from 'prom-client';
import { parse } from 'yaml';
import { COMPOSE_NODES } from '../cluster/lib/haproxy-docker.ts';
import { loadCompose } from '../cluster/lib/compose-check.ts';
import { ROUTES } from '../src/api/routes/index.ts';
import { IDP_ROUTES } from '../src/idp/http-routes.ts';
import { registerCassandraMetrics } from '../src/metrics/driver-metrics.ts';
import { CassandraHealth } from '../src/store/cassandra/health.ts';
import { bearer, request } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { startTestRedis, type TestRedis } from './helpers/redis.ts';
import { userToken } from './helpers/tokens.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DASHBOARD = path.join(ROOT, 'cluster/grafana/dashboards/chat-node.json');
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = new Set(['instance', 'job']);

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Array<{ refId: string; expr: string; datasource?: { uid: string } }>;
}
const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[]; templating: { list: Array<{ query: { query: string } }> } };
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

interface Selector {
  metric: string;
  matchers: Array<{ label: string; op: string; value: string }>;
}
interface Parsed {
  errors: string[];
  selectors: Selector[];
  grouping: string[];
}

/** PromQL as Prometheus parses it, with Grafana's variables given values. */
function parsePromql(expr: string): Parsed {
  const text = expr.replaceAll('$__rate_interval', '1m').replaceAll('$instance', '.*');
  const tree = parser.parse(text);
  const out: Parsed = { errors: [], selectors: [], grouping: [] };
  const slice = (n: { from: number; to: number }): string => text.slice(n.from, n.to);
  tree.iterate({
    enter(n) {
      if (n.type.isError) out.errors.push(`syntax error at ${n.from}: "${text.slice(Math.max(0, n.from - 10), n.to + 10)}"`);
      if (n.name === 'VectorSelector') {
        const node = n.node;
        const id = node.getChild('Identifier');
        const selector: Selector = { metric: id ? slice(id) : '', matchers: [] };
        for (const m of node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
          const label = m.getChild('LabelName');
          const op = m.getChild('MatchOp');
          const value = m.getChild('StringLiteral');
          if (label && op && value) selector.matchers.push({ label: slice(label), op: slice(op), value: JSON.parse(slice(value)) as string });
        }
        out.selectors.push(selector);
      }
      if (n.name === 'GroupingLabels') for (const l of n.node.getChildren('LabelName')) out.grouping.push(slice(l));
    },
  });
  return out;
}

/** Metric family or sample name -> the label names its samples carry (empty set: no sample yet). */
function exposition(text: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) /.exec(line);
    if (type) {
      if (!out.has(type[1] as string)) out.set(type[1] as string, new Set());
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? /.exec(line);
    if (!sample) continue;
    const labels = out.get(sample[1] as string) ?? new Set<string>();
    for (const m of (sample[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(m[1] as string);
    out.set(sample[1] as string, labels);
  }
  return out;
}

describe('the dashboard file', () => {
  test('every query is PromQL that parses', () => {
    assert.ok(queries.length >= 30, `${queries.length} queries`);
    for (const q of [...queries, { panel: 'variable instance', expr: 'chat_http_requests_total' }]) {
      const p = parsePromql(q.expr);
      assert.deepEqual(p.errors, [], `${q.panel}: ${q.expr}`);
      assert.ok(p.selectors.length > 0, `${q.panel}: selects something`);
    }
  });

  test('panels use the provisioned datasource and tile a 24-column grid without overlapping', () => {
    const provisioned = parse(fs.readFileSync(path.join(ROOT, 'cluster/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as { datasources: Array<{ uid: string; url: string }> };
    const uid = provisioned.datasources[0]?.uid;
    assert.equal(provisioned.datasources[0]?.url, 'http://prometheus:9090');
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      assert.ok(p.gridPos.x >= 0 && p.gridPos.x + p.gridPos.w <= 24, `${p.title}: inside 24 columns`);
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          assert.ok(!cells.has(`${x},${y}`), `${p.title} overlaps another panel at ${x},${y}`);
          cells.add(`${x},${y}`);
        }
      }
      if (p.type === 'row') continue;
      assert.equal(p.datasource?.uid, uid, `${p.title}: datasource`);
      const refs = (p.targets ?? []).map((t) => t.refId);
      assert.equal(new Set(refs).size, refs.length, `${p.title}: refIds unique`);
    }
    assert.equal(new Set(dashboard.panels.map((p) => p.id)).size, dashboard.panels.length, 'panel ids unique');
    const provider = parse(fs.readFileSync(path.join(ROOT, 'cluster/grafana/provisioning/dashboards/chat.yml'), 'utf8')) as { providers: Array<{ options: { path: string } }> };
    const grafana = loadCompose(path.join(ROOT, 'docker-compose.cluster.yml')).find((s) => s.name === 'grafana');
    assert.ok(grafana?.volumes.includes(`./cluster/grafana/dashboards:${provider.providers[0]?.options.path}:ro`), 'the dashboards are mounted where the provider reads them');
  });

  test('Prometheus scrapes exactly the compose file\'s nodes, on their metrics port', () => {
    const prom = parse(fs.readFileSync(path.join(ROOT, 'cluster/prometheus.yml'), 'utf8')) as { scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }> };
    const targets = prom.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    const nodes = loadCompose(path.join(ROOT, 'docker-compose.cluster.yml')).filter((s) => s.environment.CHAT_NODE_ID !== undefined);
    assert.deepEqual(targets.sort(), nodes.map((s) => `${s.name}:${s.environment.CHAT_METRICS_PORT}`).sort());
    assert.deepEqual(nodes.map((s) => s.name).sort(), [...COMPOSE_NODES].sort());
  });
});

describe('against the metrics a node exports', () => {
  let redis: TestRedis;
  let node: TestNode;
  let scraped = new Map<string, Set<string>>();
  const secret = (): string => crypto.randomBytes(32).toString('hex');

  before(async () => {
    redis = await startTestRedis();
    node = await startTestNode({
      CHAT_CLUSTER: 'redis',
      CHAT_REDIS_URL: redis.url,
      CHAT_REDIS_KEY_PREFIX: `dash-${crypto.randomUUID().slice(0, 8)}:`,
      CHAT_CLUSTER_SECRET: secret(),
      CHAT_CURSOR_SECRET: secret(),
      CHAT_REALTIME_SECRET: secret(),
      CHAT_SQLITE_MODE: 'shared-file',
      CHAT_RETENTION_INTERVAL_MS: '0',
      CHAT_RATE_SEND: '1/60s',
    });
    // Traffic that makes every labelled series appear: a group, a send, a refused send.
    const bob = await userToken(node.idp, 'bob');
    const app = `${node.api}/tenants/acme/applications/support`;
    const post = (url: string, body: unknown) => request(url, { method: 'POST', headers: { ...bearer(bob), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const group = await post(`${app}/conversations`, { type: 'GROUP', name: 'dashboard', member_user_ids: ['carol'] });
    assert.equal(group.status, 201, group.text);
    const messages = `${app}/conversations/${group.json().conversation_id as string}/messages`;
    assert.equal((await post(messages, { body: 'one' })).status, 201);
    assert.equal((await post(messages, { body: 'two' })).status, 429);
    const text = (await request(`http://127.0.0.1:${node.metricsPort}/metrics`)).text;
    // Cassandra's metrics, as a node with the Cassandra store registers them over its driver
    // client (no server here: the client is not connected, its metrics are).
    const registry = new Registry();
    registerCassandraMetrics(registry, new CassandraHealth(new cassandra.Client({ contactPoints: ['127.0.0.1:1'], localDataCenter: 'datacenter1' })));
    scraped = exposition(`${text}\n${await registry.metrics()}`);
  });
  after(async () => {
    await node?.stop();
    await redis?.stop();
    if (node) fs.rmSync(node.dataDir, { recursive: true, force: true });
  });

  test('every metric a query selects is exported, with the labels the query filters on', () => {
    const templates = new Set([...ROUTES.map((r) => r.path), ...IDP_ROUTES.map((r) => `/idp${r.path}`), 'unmatched']);
    for (const q of queries) {
      const p = parsePromql(q.expr);
      const available = new Set<string>(TARGET_LABELS);
      for (const s of p.selectors) {
        const labels = scraped.get(s.metric);
        assert.ok(labels, `${q.panel}: ${s.metric} is not exported`);
        assert.ok(labels.size > 0 || s.matchers.every((m) => TARGET_LABELS.has(m.label)), `${q.panel}: ${s.metric} has no sample to check its labels against`);
        for (const l of labels) available.add(l);
        for (const m of s.matchers) {
          assert.ok(TARGET_LABELS.has(m.label) || labels.has(m.label), `${q.panel}: ${s.metric} has no label ${m.label}`);
          if (m.label === 'route' && m.op === '=') assert.ok(templates.has(m.value), `${q.panel}: ${m.value} is no route template`);
        }
      }
      for (const g of p.grouping) assert.ok(available.has(g), `${q.panel}: grouped by ${g}, which none of its metrics carries`);
    }
  });

  test('the Sends panel selects the series a send produces', () => {
    const sends = queries.filter((q) => q.panel === 'Sends').map((q) => parsePromql(q.expr).selectors[0] as Selector);
    const sent = sends.find((s) => s.matchers.some((m) => m.label === 'status' && m.op === '=' && m.value === '201'));
    assert.ok(sent, 'a selector of sends answered 201');
    const route = sent.matchers.find((m) => m.label === 'route')?.value;
    assert.ok(ROUTES.some((r) => r.operationId === 'sendMessage' && r.path === route && r.method === 'POST'), `${route} is the send route`);
  });
});
