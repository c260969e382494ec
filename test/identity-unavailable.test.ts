/**
 * A node talking to its IdP over HTTP (CHAT_IDP=http) while that IdP revokes, rotates keys, goes
 * away and comes back. The IdP is the standalone process; its fixture carries a fixed signing
 * key (helpers/fixture.ts), so a restarted IdP signs exactly as before.
 *
 * The tests of the first suite are steps of one story and run in order.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { writeTestFixture, type TestFixture } from './helpers/fixture.ts';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { freePort, startTestIdp, startTestNode, type TestIdp, type TestNode } from './helpers/processes.ts';
import { machineToken, revoke, userToken } from './helpers/tokens.ts';

/**
 * Freshness bound of cached IdP answers. Long enough that "a call right after the IdP stopped"
 * is inside it even on a loaded machine (the stop takes a few ms), short enough to wait out.
 */
const CACHE_TTL_MS = 1000;
const CAPS = '/tenants/acme/applications/support/me/capabilities';

let fx: TestFixture;
let idp: TestIdp;
let node: TestNode;
const extra: TestNode[] = [];

before(async () => {
  fx = await writeTestFixture();
  // A fixed port, so the IdP can come back on the same address later.
  idp = await startTestIdp({ IDP_FIXTURE: fx.path, IDP_PORT: String(await freePort()) });
  node = await startTestNode(nodeEnv(idp.url));
});
after(async () => {
  for (const p of [node, idp, ...extra]) await p?.stop();
  for (const n of [node, ...extra]) if (n) fs.rmSync(n.dataDir, { recursive: true, force: true });
  await fx.remove();
});

function nodeEnv(idpUrl: string): Record<string, string> {
  return { CHAT_IDP: 'http', CHAT_IDP_URL: idpUrl, CHAT_IDENTITY_CACHE_TTL_MS: String(CACHE_TTL_MS), CHAT_REVOCATION_POLL_MS: '200', CHAT_IDP_TIMEOUT_MS: '500' };
}

const call = (token: string, on: TestNode = node): Promise<Res> => request(`${on.api}${CAPS}`, { headers: bearer(token) });

async function assertOk(token: string, on: TestNode = node): Promise<void> {
  const res = await call(token, on);
  assert.equal(res.status, 200, res.text);
}

function assertUnavailable(res: Res): void {
  assertErrorBody(res, 503, 'identity_unavailable', `/api/v1${CAPS}`);
  assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/, `Retry-After: ${String(res.headers['retry-after'])}`);
}

describe('node with an IdP over HTTP', () => {
  const tokens = { bob: '', machine: '', unused: '' };

  test('calls with tokens from the standalone IdP succeed', async () => {
    tokens.bob = await userToken(idp.url, 'bob');
    tokens.machine = await machineToken(idp.url, 'acme-support-backend');
    tokens.unused = await userToken(idp.url, 'carol');
    await assertOk(tokens.bob);
    await assertOk(tokens.machine);
    assert.equal(decodeProtectedHeader(tokens.bob).kid, fx.privateJwk.kid, 'the IdP signs with the fixture key');
  });

  test('a token revoked at the IdP is refused with token_revoked within a few polls', async () => {
    const t = await userToken(idp.url, 'bob');
    await assertOk(t);
    await revoke(idp.url, t, 'acme-support-web');
    const started = Date.now();
    let res = await call(t);
    while (res.status === 200 && Date.now() - started < 3000) {
      await sleep(50);
      res = await call(t);
    }
    assertErrorBody(res, 401, 'token_revoked');
    await assertOk(tokens.bob);
  });

  test('after a key rotation a new token (new kid) is accepted, and older tokens still work', async () => {
    const rotated = await request(`${idp.url}/dev/rotate-keys`, { method: 'POST' });
    assert.equal(rotated.status, 200, rotated.text);
    const kid = (rotated.json() as { kid: string }).kid;
    const fresh = await userToken(idp.url, 'bob');
    assert.equal(decodeProtectedHeader(fresh).kid, kid);
    assert.notEqual(kid, fx.privateJwk.kid);
    await assertOk(fresh);
    await assertOk(tokens.bob); // verified before the rotation (cached)
    await assertOk(tokens.unused); // never seen: verified now with the old key, still published
  });

  test(
    'a token signed with a key rotated right after a JWKS fetch is accepted too',
    async () => {
      const rotated = await request(`${idp.url}/dev/rotate-keys`, { method: 'POST' });
      assert.equal(rotated.status, 200);
      await assertOk(await userToken(idp.url, 'bob'));
    },
  );

  test('with the IdP gone, a call inside the freshness window is answered from cache', async () => {
    // A browser call first, so the node has seen the application's registered origins.
    const browser = await request(`${node.api}${CAPS}`, { headers: { ...bearer(tokens.bob), Origin: 'http://localhost:3000' } });
    assert.equal(browser.headers['access-control-allow-origin'], 'http://localhost:3000');
    const primedAt = Date.now();
    await assertOk(tokens.bob);
    assert.equal(await idp.stop(), 0);
    const res = await call(tokens.bob);
    const elapsed = Date.now() - primedAt;
    assert.ok(elapsed < CACHE_TTL_MS, `premise: the call came ${elapsed} ms after the cached answer`);
    assert.equal(res.status, 200, res.text);
  });

  test('once the window has passed, the call is identity_unavailable (503) with Retry-After', async () => {
    await sleep(CACHE_TTL_MS + 50);
    assertUnavailable(await call(tokens.bob));
    assertUnavailable(await call(tokens.machine));
  });

  test('the 503 stays readable by a registered browser origin (last known origins), not by others', async () => {
    const registered = await request(`${node.api}${CAPS}`, { headers: { ...bearer(tokens.bob), Origin: 'http://localhost:3000' } });
    assertUnavailable(registered);
    assert.equal(registered.headers['access-control-allow-origin'], 'http://localhost:3000');
    assert.match(String(registered.headers['access-control-expose-headers']), /Retry-After/);
    const stranger = await request(`${node.api}${CAPS}`, { headers: { ...bearer(tokens.bob), Origin: 'https://evil.test' } });
    assertUnavailable(stranger);
    assert.equal(stranger.headers['access-control-allow-origin'], undefined);
  });

  test('a node started while the IdP is down starts, answers identity_unavailable, and recovers when the IdP is back', async () => {
    const late = await startTestNode(nodeEnv(idp.url));
    extra.push(late);
    assert.equal((await request(`${late.origin}/healthz`)).status, 200);
    assert.equal((await request(`${late.origin}/readyz`)).status, 200);
    assertUnavailable(await call(tokens.bob, late));

    // The IdP comes back on the same address with the same fixture, hence the same signing key.
    idp = await startTestIdp({ IDP_FIXTURE: fx.path, IDP_PORT: String(idp.port) });
    await assertOk(tokens.bob, late);
    await assertOk(tokens.bob);
    // A token of the restarted IdP is trusted by the node that knew the IdP before, at once.
    const afterRestart = await userToken(idp.url, 'bob');
    assert.equal(decodeProtectedHeader(afterRestart).kid, fx.privateJwk.kid);
    await assertOk(afterRestart);
    await assertOk(afterRestart, late);
  });
});
