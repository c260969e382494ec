/**
 * Caps on realtime streams: per user on a node (CHAT_REALTIME_MAX_STREAMS_PER_USER, refused with
 * 429 `rate_limited`) and per node (CHAT_REALTIME_MAX_STREAMS, refused with 503
 * `service_unavailable`), both with Retry-After and the contract's error body; a closed stream
 * frees its place. Before the caps one credential opened 1,000 streams on one node.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

let node: TestNode;
const urls: Record<string, string> = {};

/** An open stream (read until `ready`), or the refusal. */
interface Opened {
  res: http.IncomingMessage;
  close(): void;
}

function open(url: string): Promise<Opened | Res> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }));
        return;
      }
      const onData = (d: string): void => {
        text += d;
        if (text.includes('event: ready')) {
          res.off('data', onData);
          res.resume();
          resolve({ res, close: () => req.destroy() });
        }
      };
      res.on('data', onData);
    });
    req.on('error', reject);
  });
}

const isOpen = (o: Opened | Res): o is Opened => 'close' in o;

async function metric(name: string): Promise<number> {
  const text = (await request(`http://127.0.0.1:${node.metricsPort}/metrics`)).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : Number.NaN;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

before(async () => {
  node = await startTestNode({ CHAT_REALTIME_MAX_STREAMS_PER_USER: '2', CHAT_REALTIME_MAX_STREAMS: '3' });
  for (const user of ['bob', 'carol', 'frank']) {
    const token = await userToken(node.idp, user);
    const res = await request(`${node.api}/tenants/acme/applications/support/notifications/realtime-token`, { headers: bearer(token) });
    assert.equal(res.status, 200, res.text);
    urls[user] = res.json().stream_url as string;
  }
});
after(() => node.stop());

test('a user past the per-user cap gets 429, the node past its cap 503; closing a stream frees its place', async () => {
  const bob1 = await open(urls.bob!);
  const bob2 = await open(urls.bob!);
  assert.ok(isOpen(bob1) && isOpen(bob2), 'two streams per user are allowed');

  const bob3 = await open(urls.bob!);
  assert.ok(!isOpen(bob3));
  const body = assertErrorBody(bob3, 429, 'rate_limited', '/api/v1/realtime/stream');
  assert.match(String(body.message), /realtime streams/);
  assert.equal(bob3.headers['retry-after'], '10');
  assert.equal(bob3.headers['access-control-allow-origin'], '*', 'readable by a browser');

  const carol1 = await open(urls.carol!);
  assert.ok(isOpen(carol1), 'another user still fits: 3 streams on the node');
  const frank1 = await open(urls.frank!);
  assert.ok(!isOpen(frank1));
  assertErrorBody(frank1, 503, 'service_unavailable', '/api/v1/realtime/stream');
  assert.equal(frank1.headers['retry-after'], '1');

  assert.equal(await metric('chat_realtime_streams_refused_total{cap="user"}'), 1);
  assert.equal(await metric('chat_realtime_streams_refused_total{cap="node"}'), 1);

  bob1.close();
  await until(async () => (await metric('chat_realtime_streams_open')) === 2, 'the closed stream leaves');
  const bob4 = await open(urls.bob!);
  assert.ok(isOpen(bob4), 'the place of a closed stream is free again');
  for (const s of [bob2, carol1, bob4]) if (isOpen(s)) s.close();
  await until(async () => (await metric('chat_realtime_streams_open')) === 0, 'every stream left');
  const frank2 = await open(urls.frank!);
  assert.ok(isOpen(frank2), 'the node takes streams again');
  frank2.close();
});
