/**
 * The load balancer in front of the nodes (HAProxy with cluster/lib/haproxy.ts's configuration,
 * as `npm run cluster` and the compose file run it), over raw sockets: it takes header sections of
 * 16 KB and more in any number of packets and hands them to the node whole; it answers what the
 * node's HTTP parser would close or hold unanswered with the contract's error body; a refused
 * upload's answer gets through it; a realtime stream's events go through it at once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { MAX_CLIENT_HEADER_FIELDS } from '../cluster/lib/haproxy.ts';
import { writeTestFixture, signToken, type TestFixture } from './helpers/fixture.ts';
import { startHaproxy, NO_HAPROXY, type TestHaproxy } from './helpers/haproxy.ts';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { pieces, rawExchange, rawUpload, type RawResponse } from './helpers/raw-http.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

const CAPS = '/api/v1/tenants/acme/applications/support/me/capabilities';

const asRes = (r: RawResponse | null): Res => {
  assert.ok(r, 'a response came');
  return { status: r.status, headers: r.headers, text: r.body, json: () => JSON.parse(r.body) };
};

/**
 * A backend that answers every request `200 ok` and records, per request other than health
 * checks, how many reads its header section took.
 */
function countingBackend(): Promise<{ port: number; reads: number[]; close(): void }> {
  const reads: number[] = [];
  const server = net.createServer((socket) => {
    let buffered = '';
    let count = 0;
    socket.on('data', (d: Buffer) => {
      buffered += d.toString('latin1');
      count++;
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        if (!head.includes('/readyz')) reads.push(count);
        count = buffered.length > 0 ? 1 : 0;
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      }
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address() as net.AddressInfo;
      resolve({ port: addr.port, reads, close: () => server.close() });
    });
  });
}

describe('HAProxy in front of the nodes', { skip: NO_HAPROXY }, () => {
  test('takes a 16 KB header section in 100-byte packets and hands it to the backend in one read', async () => {
    const backend = await countingBackend();
    const lb = await startHaproxy([{ name: 'b', address: `127.0.0.1:${backend.port}` }]);
    try {
      const headers = Array.from({ length: 17 }, (_, i) => `X-Claim-${i}: ${'v'.repeat(1000)}\r\n`).join('');
      const req = `GET /api/v1/x HTTP/1.1\r\nHost: t\r\n${headers}\r\n`;
      assert.ok(req.length > 16 * 1024);
      const o = await rawExchange(lb.port, pieces(req, 100), { gapMs: 1, stopAtResponse: true });
      assert.equal(o.response?.status, 200, o.raw.slice(0, 200));
      assert.deepEqual(backend.reads, [1], 'the whole section in the first read');
    } finally {
      await lb.stop();
      backend.close();
    }
  });

  describe('with a node behind it', () => {
    let fx: TestFixture;
    let node: TestNode;
    let lb: TestHaproxy;
    let issuer = '';

    before(async () => {
      fx = await writeTestFixture();
      node = await startTestNode({ CHAT_IDP_FIXTURE: fx.path });
      issuer = ((await request(`${node.idp}/.well-known/openid-configuration`)).json() as { issuer: string }).issuer;
      lb = await startHaproxy([{ name: 'node-1', address: `127.0.0.1:${node.port}` }]);
    });
    after(async () => {
      await lb?.stop();
      await node?.stop();
      await fx?.remove();
    });

    /** A valid user token of about `bytes` bytes (groups claims, as real identity providers add). */
    async function bigToken(bytes: number): Promise<string> {
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: issuer, aud: 'chat-api', sub: 'bob', client_id: 'acme-support-web', scope: 'chat:access', principal_type: 'user', tenant_id: 'acme', application_id: 'support', iat: now, exp: now + 300, jti: randomUUID() };
      const base = await signToken(fx.privateJwk, claims);
      const groups = Array.from({ length: Math.ceil(((bytes - base.length) * 0.75) / 41) }, (_, i) => `group-${i}-${'g'.repeat(28)}`);
      return signToken(fx.privateJwk, Object.assign(claims, { groups }));
    }

    test("a realtime stream's events go through at once, not held back by HAProxy (option http-no-delay)", { timeout: 60_000 }, async () => {
      // Without the option HAProxy sends a streamed response's data with MSG_MORE, and the kernel
      // holds a lone event up to 200 ms for more: every event of a quiet stream came ~200 ms late.
      const base = `${lb.origin}/api/v1/tenants/acme/applications/support`;
      const machine = await machineToken(node.idp);
      const bob = await userToken(node.idp, 'bob');
      const created = await request(`${base}/conversations`, {
        method: 'POST',
        headers: Object.assign(bearer(machine), { 'Content-Type': 'application/json' }),
        body: JSON.stringify({ type: 'GROUP', name: `lb-${randomUUID().slice(0, 6)}`, member_user_ids: ['alice', 'bob'] }),
      });
      assert.equal(created.status, 201, created.text);
      const conversationId = created.json().conversation_id as string;
      const cred = await request(`${base}/notifications/realtime-token`, { headers: bearer(bob) });
      assert.equal(cred.status, 200, cred.text);
      const url = new URL(cred.json().stream_url as string);
      const es = new EventSource(`${lb.origin}${url.pathname}${url.search}`);
      try {
        const arrived = new Map<string, number>();
        es.addEventListener('message.created', (e) => arrived.set((JSON.parse(e.data) as { data: { message: { body: string } } }).data.message.body, performance.now()));
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('the stream did not open')), 10_000);
          es.addEventListener('ready', () => {
            clearTimeout(t);
            resolve();
          });
        });
        const delays: number[] = [];
        for (let i = 0; i < 9; i += 1) {
          const body = `ping-${i}`;
          const sent = performance.now();
          const res = await request(`${base}/conversations/${conversationId}/messages`, {
            method: 'POST',
            headers: Object.assign(bearer(machine), { 'Content-Type': 'application/json' }),
            body: JSON.stringify({ body, actor_user_id: 'alice' }),
          });
          assert.equal(res.status, 201, res.text);
          const deadline = Date.now() + 5000;
          while (!arrived.has(body) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
          assert.ok(arrived.has(body), `${body} arrived`);
          delays.push(arrived.get(body)! - sent);
          await new Promise((r) => setTimeout(r, 20)); // a quiet stream: each event alone
        }
        delays.sort((a, b) => a - b);
        // The median, so one slow moment of a busy CI host does not decide; held back, it was ~200 ms.
        assert.ok(delays[4]! < 100, `send to event through HAProxy, ms: ${delays.map((d) => d.toFixed(1)).join(', ')}`);
      } finally {
        es.close();
      }
    });

    test('an 8 KB token in 50-byte packets, with 8 KB of other headers, works through it', async () => {
      const token = await bigToken(8 * 1024);
      assert.ok(token.length > 8000, `${token.length}`);
      const cookies = Array.from({ length: 9 }, (_, i) => `X-Cookie-${i}: ${'c'.repeat(1000)}\r\n`).join('');
      const req = `GET ${CAPS} HTTP/1.1\r\nHost: chat.example\r\nAuthorization: Bearer ${token}\r\n${cookies}\r\n`;
      assert.ok(req.length > 16 * 1024, `${req.length}`);
      const o = await rawExchange(lb.port, pieces(req, 50), { gapMs: 0, stopAtResponse: true, waitMs: 5000 });
      assert.equal(o.response?.status, 200, o.raw.slice(0, 300));
      assert.equal(JSON.parse(o.response!.body).tenant_id, 'acme');
    });

    test('what the node would leave unanswered gets the contract error body from HAProxy', async () => {
      const get = (headers: string, line = `GET ${CAPS} HTTP/1.1`): string => `${line}\r\n${headers}\r\n`;
      const fields = Array.from({ length: MAX_CLIENT_HEADER_FIELDS }, (_, i) => `X-F${i}: v\r\n`).join('');
      const cases: Array<[string, string, number, string]> = [
        ['more header fields than the node takes', get(`Host: t\r\n${fields}`), 431, 'header_fields_too_large'],
        ['a control character in a header value', get('Host: t\r\nX-A: a\x01b\r\n'), 400, 'invalid_request'],
        ['an underscore in a header name', get('Host: t\r\nX_Forwarded: 1\r\n'), 400, 'invalid_request'],
        ['HTTP/1.0', get('Host: t\r\n', `GET ${CAPS} HTTP/1.0`), 400, 'invalid_request'],
        ['no Host', get(''), 400, 'invalid_request'],
        ['an asterisk-form target', get('Host: t\r\n', 'OPTIONS * HTTP/1.1'), 400, 'invalid_request'],
      ];
      for (const [what, req, status, code] of cases) {
        const o = await rawExchange(lb.port, [req], { stopAtResponse: true, waitMs: 3000 });
        assert.ok(!o.timedOut, `${what}: answered`);
        const body = assertErrorBody(asRes(o.response), status, code);
        assert.ok(Number.isFinite(Date.parse(body.timestamp as string)) && /\.\d{3}Z$/.test(body.timestamp as string), `${what}: ${String(body.timestamp)}`);
      }
      // One field fewer is the node's to answer.
      const fewer = Array.from({ length: MAX_CLIENT_HEADER_FIELDS - 1 }, (_, i) => `X-F${i}: v\r\n`).join('');
      const ok = await rawExchange(lb.port, [get(`Host: t\r\n${fewer}`)], { stopAtResponse: true });
      assertErrorBody(asRes(ok.response), 401, 'invalid_token', CAPS);
    });

    test('conflicting Content-Length headers: HAProxy refuses them (400, its own page) and closes', async () => {
      const o = await rawExchange(lb.port, [`POST /api/v1/x HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 30\r\n\r\nab`]);
      assert.equal(o.response?.status, 400);
      assert.ok(o.closed && !o.timedOut);
    });

    test("a refused 4 MB upload's 413 reaches a client that reads only after sending", async () => {
      const path = '/api/v1/tenants/acme/applications/support/conversations';
      const o = await rawUpload(lb.port, `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`, 4 * 1024 * 1024, { readAfterSending: true });
      assertErrorBody(asRes(o.response), 413, 'payload_too_large', path);
    });

    test('no node up: HAProxy answers 503 service_unavailable with Retry-After and the error body', async () => {
      await node.stop();
      const deadline = Date.now() + 15_000;
      let res = await request(`${lb.origin}${CAPS}`);
      while (res.status !== 503 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        res = await request(`${lb.origin}${CAPS}`).catch(() => res);
      }
      assertErrorBody(res, 503, 'service_unavailable', CAPS);
      assert.equal(res.headers['retry-after'], '1');
    });
  });
});
