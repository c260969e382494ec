/**
 * Serving the built web app (src/web/static-app.ts) from a uWS app on a random port: caching
 * headers (immutable hashed assets, revalidated index and service worker, 304 on the ETag),
 * compression, the strict CSP, redirects to /app/, 404 for what the build does not hold
 * (no path reaches the file system), and the hint when there is no build.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import uWS, { type us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { request } from './helpers/http.ts';
import { mountWebApp } from '../src/web/static-app.ts';

async function serve(dir: string): Promise<{ base: string; close: () => void }> {
  const app = uWS.App();
  mountWebApp(app, { dir, connectOrigins: ['http://api.example.test'] });
  const socket = await new Promise<us_listen_socket>((resolve, reject) => app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen')))));
  const port = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
  return { base: `http://127.0.0.1:${port}`, close: () => uWS.us_listen_socket_close(socket) };
}

describe('web app static files', () => {
  let dir: string;
  let server: { base: string; close: () => void };
  const script = `console.log(${JSON.stringify('x'.repeat(4000))});`;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'web-static-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Chat</title><script type="module" src="/app/assets/index-abc123.js"></script>');
    fs.writeFileSync(path.join(dir, 'assets/index-abc123.js'), script);
    fs.writeFileSync(path.join(dir, 'sw.js'), 'self.addEventListener("push", () => {});');
    server = await serve(dir);
  });
  after(() => {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('index.html is revalidated, carries the CSP and the security headers', async () => {
    const res = await request(`${server.base}/app/`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-cache');
    const csp = String(res.headers['content-security-policy']);
    for (const part of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "connect-src 'self' http://api.example.test"]) {
      assert.ok(csp.includes(part), `CSP has ${part}: ${csp}`);
    }
    assert.ok(!csp.includes('unsafe-inline') && !csp.includes('unsafe-eval'));
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    const again = await request(`${server.base}/app/index.html`, { headers: { 'If-None-Match': String(res.headers.etag) } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
  });

  test('hashed assets are immutable and compressed when the client accepts it', async () => {
    const plain = await request(`${server.base}/app/assets/index-abc123.js`);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(plain.headers['content-type']), /^text\/javascript/);
    assert.equal(plain.text, script);
    assert.equal(plain.headers['content-encoding'], undefined);
    const br = await new Promise<{ encoding: string; body: Buffer }>((resolve, reject) => {
      import('node:http').then(({ default: http }) => {
        http.get(`${server.base}/app/assets/index-abc123.js`, { headers: { 'Accept-Encoding': 'gzip, br' } }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve({ encoding: String(res.headers['content-encoding']), body: Buffer.concat(parts) }));
        }).on('error', reject);
      }, reject);
    });
    assert.equal(br.encoding, 'br');
    assert.ok(br.body.length < script.length / 10);
    assert.equal(zlib.brotliDecompressSync(br.body).toString(), script);
  });

  test('the service worker is revalidated; redirects; unknown and traversal paths are 404', async () => {
    assert.equal((await request(`${server.base}/app/sw.js`)).headers['cache-control'], 'no-cache');
    for (const p of ['/', '/app']) {
      const res = await request(`${server.base}${p}`);
      assert.equal(res.status, 302);
      assert.equal(res.headers.location, '/app/');
    }
    for (const p of ['/app/nope.js', '/app/assets/', '/app/%E0%A4%A', '/app/assets%2Findex-abc123.js.map']) {
      assert.equal((await request(`${server.base}${p}`)).status, 404, p);
    }
    // uWS itself drops requests whose path climbs with "..": they never reach the handler.
    for (const p of ['/app/../package.json', '/app/%2e%2e/package.json']) {
      const outcome = await request(`${server.base}${p}`).then((r) => r.status, () => 'closed');
      assert.ok(outcome === 404 || outcome === 'closed', `${p}: ${String(outcome)}`);
    }
  });

  test('without a build, /app/ says how to make one', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'web-none-'));
    const s = await serve(empty);
    try {
      const res = await request(`${s.base}/app/`);
      assert.equal(res.status, 503);
      assert.match(res.text, /npm run build/);
    } finally {
      s.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
