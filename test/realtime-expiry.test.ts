/** The realtime credential's lifetime (a short one configured here) and the public base URL. */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { EventSource } from 'eventsource';
import { assertErrorBody, bearer, request } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

const PUBLIC = 'https://chat.example.test/api/v1';
const TTL = 1500;
let node: TestNode;
let bob = '';

before(async () => {
  node = await startTestNode({ CHAT_PUBLIC_BASE_URL: PUBLIC, CHAT_REALTIME_TOKEN_TTL_MS: String(TTL) });
  bob = await userToken(node.idp, 'bob');
});
after(() => node.stop());

/** The stream URL as this test reaches the node (the public base URL points at a load balancer). */
async function streamUrl(): Promise<{ url: string; expires: number }> {
  const res = await request(`${node.api}/tenants/acme/applications/support/notifications/realtime-token`, { headers: bearer(bob) });
  assert.equal(res.status, 200, res.text);
  const { stream_url, expires } = res.json() as { stream_url: string; expires: number };
  assert.ok(stream_url.startsWith(`${PUBLIC}/realtime/stream?credential=`), stream_url);
  return { url: stream_url.replace(PUBLIC, node.api), expires };
}

test('stream_url is built on the configured public base URL; expires follows the configured lifetime', async () => {
  const t0 = Date.now();
  const { expires } = await streamUrl();
  assert.ok(expires >= t0 + TTL - 50 && expires <= Date.now() + TTL, `${expires - t0}`);
});

test('the stream sends `expired` at the credential’s expiry and ends', async () => {
  const { url, expires } = await streamUrl();
  const body = await new Promise<string>((resolve, reject) => {
    http.get(url, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    }).on('error', reject);
    setTimeout(() => reject(new Error('the stream did not end after its expiry')), TTL + 3000);
  });
  assert.ok(Date.now() >= expires, 'not before expiry');
  assert.match(body, /event: ready\n/);
  assert.match(body, /event: expired\ndata: \{"expires":\d+\}\n\n$/);
});

test('an EventSource gets `expired`, then its reconnect with the stale credential is refused and it closes', async () => {
  const { url } = await streamUrl();
  const es = new EventSource(url);
  const seen: string[] = [];
  es.addEventListener('ready', () => seen.push('ready'));
  es.addEventListener('expired', () => seen.push('expired'));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`still open: ${seen.join()}`)), TTL + 6000);
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) {
        clearTimeout(t);
        resolve();
      }
    };
  });
  es.close();
  assert.deepEqual(seen, ['ready', 'expired']);
});

test('an expired credential is refused with 401 invalid_token', async () => {
  const { url, expires } = await streamUrl();
  await new Promise((r) => setTimeout(r, expires - Date.now() + 50));
  const body = assertErrorBody(await request(url), 401, 'invalid_token', '/api/v1/realtime/stream');
  assert.match(String(body.message), /expired/);
});
