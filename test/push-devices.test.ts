/** Push device registration and unregistration over HTTP; what is stored is read back from the store after the node stops. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createStore, sqliteStorePath } from '../src/store/index.ts';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
const tok: Record<string, string> = {};
/** Content-Length set explicitly: node:http sends a DELETE body unframed otherwise. */
const send = (method: 'POST' | 'DELETE', token: string, body: unknown): Promise<Res> => {
  const text = JSON.stringify(body);
  return request(`${node.api}/tenants/acme/notifications/push/devices`, {
    method,
    headers: { ...bearer(token), 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) },
    body: text,
  });
};

function webSub(host = 'push.example.test') {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    endpoint: `https://${host}/send/${crypto.randomUUID()}`,
    expirationTime: null,
    keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') },
  };
}

before(async () => {
  node = await startTestNode();
  for (const u of ['bob', 'carol']) tok[u] = await userToken(node.idp, u);
  tok.machine = await machineToken(node.idp);
});
after(async () => {
  await node.stop();
  fs.rmSync(node.dataDir, { recursive: true, force: true });
});

describe('push devices', () => {
  const bobWeb1 = webSub();
  const bobWeb2 = webSub();
  const shared = webSub();
  const gone = webSub();

  test('register web, fcm and apns devices: 204, no body; registering again is safe', async () => {
    for (const body of [
      { platform: 'web', subscription: bobWeb1 },
      { platform: 'web', subscription: bobWeb2 },
      { platform: 'web', subscription: bobWeb1 },
      { platform: 'fcm', token: 'fcm-token-bob' },
      { platform: 'apns', token: 'apns-token-bob' },
      { platform: 'apns', token: 'apns-token-bob' },
    ]) {
      const res = await send('POST', tok.bob!, body);
      assert.equal(res.status, 204, res.text);
      assert.equal(res.text, '');
    }
  });

  test('a browser registered by another user moves to the latest registrant', async () => {
    assert.equal((await send('POST', tok.carol!, { platform: 'web', subscription: shared })).status, 204);
    assert.equal((await send('POST', tok.bob!, { platform: 'web', subscription: shared })).status, 204);
  });

  test('unregister: 204 for a device, again for an unknown one; another user cannot remove yours', async () => {
    assert.equal((await send('POST', tok.bob!, { platform: 'web', subscription: gone })).status, 204);
    assert.equal((await send('DELETE', tok.carol!, { token: gone.endpoint })).status, 204, 'not carol\'s: left alone');
    assert.equal((await send('DELETE', tok.bob!, { token: gone.endpoint })).status, 204);
    assert.equal((await send('DELETE', tok.bob!, { token: gone.endpoint })).status, 204);
    assert.equal((await send('DELETE', tok.bob!, { token: 'apns-token-bob' })).status, 204);
  });

  test('validation: every malformed registration is invalid_request', async () => {
    const s = webSub();
    const bad: unknown[] = [
      {},
      { platform: 'sms', token: 'x' },
      { platform: 'web' },
      { platform: 'web', token: 'x' },
      { platform: 'web', subscription: { ...s, endpoint: 'http://push.example.test/x' } },
      { platform: 'web', subscription: { ...s, endpoint: 'not a url' } },
      { platform: 'web', subscription: { endpoint: s.endpoint, keys: { p256dh: s.keys.p256dh } } },
      { platform: 'web', subscription: { endpoint: s.endpoint, keys: { p256dh: 'AAAA', auth: s.keys.auth } } },
      { platform: 'web', subscription: { endpoint: s.endpoint, keys: { p256dh: s.keys.p256dh, auth: 'c2hvcnQ' } } },
      { platform: 'web', subscription: { ...s, extra: 1 } },
      { platform: 'web', subscription: s, token: 'x' },
      { platform: 'fcm' },
      { platform: 'apns', token: '' },
      { platform: 'fcm', token: 'x', subscription: s },
      { platform: 'fcm', token: 'x', device_name: 'phone' },
    ];
    for (const body of bad) assertErrorBody(await send('POST', tok.bob!, body), 400, 'invalid_request');
    assertErrorBody(await send('DELETE', tok.bob!, {}), 400, 'invalid_request');
    assertErrorBody(await send('DELETE', tok.bob!, { token: '' }), 400, 'invalid_request');
    assertErrorBody(await send('DELETE', tok.bob!, { token: 'x', platform: 'web' }), 400, 'invalid_request');
  });

  test('machines are refused (principal_not_allowed); no token is invalid_token', async () => {
    assertErrorBody(await send('POST', tok.machine!, { platform: 'fcm', token: 'x' }), 403, 'principal_not_allowed');
    assertErrorBody(await send('DELETE', tok.machine!, { token: 'x' }), 403, 'principal_not_allowed');
    const res = await request(`${node.api}/tenants/acme/notifications/push/devices`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"platform":"fcm","token":"x"}' });
    assertErrorBody(res, 401, 'invalid_token');
  });

  test('tenant CORS: a preflight from an origin of the tenant is answered, others get no CORS headers', async () => {
    const pre = (origin: string) =>
      request(`${node.api}/tenants/acme/notifications/push/devices`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'DELETE', 'Access-Control-Request-Headers': 'authorization, content-type' },
      });
    assert.equal((await pre('https://internal.acme.test')).headers['access-control-allow-origin'], 'https://internal.acme.test');
    assert.equal((await pre('http://evil.test')).headers['access-control-allow-origin'], undefined);
  });

  test('what is stored: one row per device, keys kept, fcm token kept, moved and removed devices as expected', async () => {
    await node.stop();
    const store = await createStore({ driver: 'sqlite', path: sqliteStorePath(node.dataDir) });
    try {
      const devices = await store.pushDevices.listForUsers('acme', ['bob', 'carol']);
      const rows = devices.map((d) => [d.user_id, d.platform, d.token_or_endpoint, d.p256dh, d.auth]);
      assert.deepEqual(
        rows.sort(),
        [
          ['bob', 'fcm', 'fcm-token-bob', null, null],
          ['bob', 'web', bobWeb1.endpoint, bobWeb1.keys.p256dh, bobWeb1.keys.auth],
          ['bob', 'web', bobWeb2.endpoint, bobWeb2.keys.p256dh, bobWeb2.keys.auth],
          ['bob', 'web', shared.endpoint, shared.keys.p256dh, shared.keys.auth],
        ].sort(),
      );
    } finally {
      await store.close();
    }
  });
});
