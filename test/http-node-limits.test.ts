/**
 * The HTTP limits of a bare node (docs/http.md), over raw sockets against a real node process:
 * header sections up to 32 KB arriving in any number of pieces (uWebSockets' own limit was 4 KB
 * in pieces, compiled in; scripts/uws-header-limit.mjs raises it), an 8 KB token sent in small
 * pieces, and the framing checks of the handlers outside the JSON routes (health, 404, stream).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { headerSectionLimit, headerSectionLimitAtSites, KNOWN_BUILDS, ORIGINAL_LIMIT, patch, PATCHED_LIMIT, binaryPath } from '../scripts/uws-header-limit.mjs';
import { writeTestFixture, signToken, type TestFixture } from './helpers/fixture.ts';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { pieces, rawExchange, rawUpload, type RawResponse } from './helpers/raw-http.ts';
import { userToken } from './helpers/tokens.ts';

const CAPS = '/api/v1/tenants/acme/applications/support/me/capabilities';
const KNOWN = process.platform === 'linux' && process.arch === 'x64' && process.versions.modules === '115';
const NOT_KNOWN = 'the patched uWebSockets build exists for linux-x64 on Node 20 only';

const asRes = (r: RawResponse | null): Res => {
  assert.ok(r, 'a response came');
  return { status: r.status, headers: r.headers, text: r.body, json: () => JSON.parse(r.body) };
};

describe('scripts/uws-header-limit.mjs', { skip: KNOWN ? false : NOT_KNOWN }, () => {
  test('the installed binary has the 32 KB limit (npm install patched it)', () => {
    assert.equal(headerSectionLimit(), PATCHED_LIMIT, 'run `node scripts/uws-header-limit.mjs` (npm install does)');
  });

  test('patches a published binary once, recognises its own work, and leaves unknown files alone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-limit-'));
    try {
      const file = path.join(dir, path.basename(binaryPath()));
      const data = fs.readFileSync(binaryPath());
      for (const s of KNOWN_BUILDS[path.basename(file)]!.sites) data.writeUInt32LE(ORIGINAL_LIMIT, s.immediate);
      fs.writeFileSync(file, data);
      assert.equal(headerSectionLimit(file), ORIGINAL_LIMIT, 'the published build');
      assert.equal(headerSectionLimitAtSites(file), ORIGINAL_LIMIT);
      assert.equal(patch(file), 'patched');
      assert.equal(headerSectionLimit(file), PATCHED_LIMIT);
      assert.equal(headerSectionLimitAtSites(file), PATCHED_LIMIT);
      assert.equal(patch(file), 'already');
      // One byte changed elsewhere: not the published build any more.
      const other = fs.readFileSync(file);
      other[4096] = (other[4096]! + 1) % 256;
      fs.writeFileSync(file, other);
      assert.equal(headerSectionLimit(file), null);
      assert.equal(patch(file), 'unknown');
      assert.deepEqual(fs.readFileSync(file), other, 'left as it was');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a bare node', () => {
  let node: TestNode;
  let fx: TestFixture;
  let issuer = '';
  let streamUrl = '';

  before(async () => {
    fx = await writeTestFixture();
    node = await startTestNode({ CHAT_IDP_FIXTURE: fx.path });
    issuer = ((await request(`${node.idp}/.well-known/openid-configuration`)).json() as { issuer: string }).issuer;
    const bob = await userToken(node.idp, 'bob');
    const cred = await request(`${node.api}/tenants/acme/applications/support/notifications/realtime-token`, { headers: bearer(bob) });
    streamUrl = new URL(cred.json().stream_url as string).pathname + new URL(cred.json().stream_url as string).search;
  });
  after(async () => {
    await node?.stop();
    await fx?.remove();
  });

  /** A valid user token of about `bytes` bytes: real identity providers put groups and roles in theirs. */
  async function bigToken(bytes: number): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer, aud: 'chat-api', sub: 'bob', client_id: 'acme-support-web', scope: 'chat:access', principal_type: 'user', tenant_id: 'acme', application_id: 'support', iat: now, exp: now + 300, jti: randomUUID() };
    const base = await signToken(fx.privateJwk, claims);
    const groups = Array.from({ length: Math.ceil(((bytes - base.length) * 0.75) / 41) }, (_, i) => `group-${i}-${'g'.repeat(28)}`);
    return signToken(fx.privateJwk, Object.assign(claims, { groups }));
  }

  test('an 8 KB token sent in 100-byte pieces is answered (uWS closed such requests unanswered past 4 KB)', { skip: KNOWN ? false : NOT_KNOWN }, async () => {
    const token = await bigToken(8 * 1024);
    assert.ok(token.length > 8000 && token.length < 9000, `${token.length}`);
    const req = `GET ${CAPS} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const o = await rawExchange(node.port, pieces(req, 100), { gapMs: 2, stopAtResponse: true });
    assert.equal(o.response?.status, 200, o.raw.slice(0, 300));
    assert.equal(JSON.parse(o.response!.body).tenant_id, 'acme');
  });

  test('a 30 KB header section in 1 KB pieces is answered', { skip: KNOWN ? false : NOT_KNOWN }, async () => {
    const token = await bigToken(8 * 1024);
    const cookies = Array.from({ length: 20 }, (_, i) => `Cookie-${i}: ${'c'.repeat(1100)}\r\n`).join('');
    const req = `GET ${CAPS} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${token}\r\n${cookies}\r\n`;
    assert.ok(req.length > 30_000 && req.length < PATCHED_LIMIT);
    const o = await rawExchange(node.port, pieces(req, 1024), { gapMs: 2, stopAtResponse: true });
    assert.equal(o.response?.status, 200, o.raw.slice(0, 300));
  });

  test('health, readiness and unknown paths refuse conflicting Content-Length headers (400, closed)', async () => {
    for (const p of ['/healthz', '/readyz', '/nothing']) {
      const o = await rawExchange(node.port, [`GET ${p} HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nab`], { waitMs: 1500 });
      assertErrorBody(asRes(o.response), 400, 'invalid_request', p);
      assert.ok(o.closed && !o.timedOut, `${p}: closed`);
    }
    const longPath = await request(`${node.origin}/${'x'.repeat(9000)}`);
    assertErrorBody(longPath, 414, 'uri_too_long');
  });

  test('the stream refuses invalid framing, a request body and an oversized target, with the error body', async () => {
    const conflicting = await rawExchange(node.port, [`GET ${streamUrl} HTTP/1.1\r\nHost: t\r\nContent-Length: 9\r\nContent-Length: 2\r\n\r\nab`], { waitMs: 1500 });
    assertErrorBody(asRes(conflicting.response), 400, 'invalid_request', '/api/v1/realtime/stream');
    assert.ok(conflicting.closed);
    const withBody = await rawExchange(node.port, [`GET ${streamUrl} HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nab`], { waitMs: 1500 });
    assertErrorBody(asRes(withBody.response), 400, 'invalid_request');
    assert.equal(withBody.response?.headers['access-control-allow-origin'], '*');
    const big = await rawUpload(node.port, `GET ${streamUrl} HTTP/1.1\r\nHost: t\r\nContent-Length: ${300 * 1024}\r\n\r\n`, 300 * 1024, { readAfterSending: true });
    assertErrorBody(asRes(big.response), 413, 'payload_too_large');
    const tooLong = await request(`${node.api}/realtime/stream?credential=${'c'.repeat(33 * 1024)}`);
    assertErrorBody(tooLong, 414, 'uri_too_long', '/api/v1/realtime/stream');
  });

  test('the node says which header-section limit it runs with', () => {
    const line = node.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((o) => o.msg === 'chat node listening');
    assert.equal(line?.header_section_limit, KNOWN ? PATCHED_LIMIT : null);
  });
});
