/**
 * Tokens signed with the IdP's own key (fixture `signing_keys`) but wrong in one claim or header:
 * the signature is good, so only the claim checks stand between them and the API. Each must be
 * `invalid_token` (401); the same token made right is accepted.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, type JWTPayload } from 'jose';
import { writeTestFixture, signToken, type TestFixture } from './helpers/fixture.ts';
import { assertErrorBody, bearer, request } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken } from './helpers/tokens.ts';

const SHORT_LIVED = 'acme-support-shortlived';
const CAPS = '/tenants/acme/applications/support/me/capabilities';

let fx: TestFixture;
let node: TestNode;
let issuer: string;

before(async () => {
  fx = await writeTestFixture({
    machineClients: [{ client_id: SHORT_LIVED, tenant_id: 'acme', application_id: 'support', scopes: ['chat:sync'], token_ttl_seconds: 1 }],
  });
  node = await startTestNode({ CHAT_IDP_FIXTURE: fx.path });
  issuer = ((await request(`${node.idp}/.well-known/openid-configuration`)).json() as { issuer: string }).issuer;
});
after(async () => {
  await node.stop();
  fs.rmSync(node.dataDir, { recursive: true, force: true });
  await fx.remove();
});

const get = (token: string) => request(`${node.api}${CAPS}`, { headers: bearer(token) });
const now = () => Math.floor(Date.now() / 1000);

function userClaims(): JWTPayload {
  return {
    iss: issuer,
    aud: 'chat-api',
    sub: 'bob',
    client_id: 'acme-support-web',
    scope: 'chat:access',
    principal_type: 'user',
    tenant_id: 'acme',
    application_id: 'support',
    iat: now(),
    exp: now() + 300,
    jti: randomUUID(),
  };
}

function machineClaims(): JWTPayload {
  return { ...userClaims(), sub: 'acme-support-backend', client_id: 'acme-support-backend', scope: 'chat:sync', principal_type: 'machine' };
}

/** A claim set with `changes` applied; `undefined` deletes the claim. */
function edit(base: JWTPayload, changes: Record<string, unknown>): JWTPayload {
  const out: Record<string, unknown> = { ...base, jti: randomUUID() };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out as JWTPayload;
}

async function assertInvalid(token: string, message?: RegExp): Promise<void> {
  const res = await get(token);
  assertErrorBody(res, 401, 'invalid_token', `/api/v1${CAPS}`);
  if (message) assert.match(res.json().message, message);
}

describe('tokens signed with the IdP key', () => {
  test('the IdP publishes the fixture key, and a correct token signed with it is accepted', async () => {
    const jwks = (await request(`${node.idp}/jwks.json`)).json() as { keys: { kid: string }[] };
    assert.ok(jwks.keys.some((k) => k.kid === fx.privateJwk.kid), 'the fixture key is in the JWKS');

    const user = await get(await signToken(fx.privateJwk, userClaims()));
    assert.equal(user.status, 200, user.text);
    assert.equal(user.json().principal_type, 'user');
    const machine = await get(await signToken(fx.privateJwk, machineClaims()));
    assert.equal(machine.status, 200, machine.text);
    assert.equal(machine.json().principal_type, 'machine');
  });

  test('an audience other than chat-api', async () => {
    for (const aud of ['urn:chat:api', 'other-api', ['other-api']]) {
      await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { aud })), /audience/);
    }
    await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { aud: undefined })));
  });

  test('an issuer other than the IdP', async () => {
    for (const iss of [`${issuer}/`, 'http://evil.test/idp', issuer.replace('127.0.0.1', 'localhost')]) {
      await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { iss })), /issuer/);
    }
    await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { iss: undefined })));
  });

  test('an expired token', async () => {
    await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { iat: now() - 120, exp: now() - 60 })), /expired/);
    await assertInvalid(await signToken(fx.privateJwk, edit(machineClaims(), { iat: now() - 3600, exp: now() - 1 })), /expired/);
  });

  test('a real 1-second machine token is refused once it has expired, also after it was cached', async () => {
    // Ask right after a second boundary, so the token (exp = iat + 1, whole seconds) has most of
    // its second left for the first call.
    await sleep(1000 - (Date.now() % 1000) + 20);
    const token = await machineToken(node.idp, SHORT_LIVED);
    const { exp, iat } = decodeJwt(token);
    assert.equal((exp as number) - (iat as number), 1);
    const first = await get(token);
    assert.equal(first.status, 200, first.text);
    await sleep(Math.max(0, (exp as number) * 1000 - Date.now()) + 20);
    await assertInvalid(token, /expired/);
  });

  test('a token without jti, sub, exp or client_id', async () => {
    for (const claim of ['jti', 'sub', 'exp', 'client_id']) {
      for (const base of [userClaims(), machineClaims()]) {
        const res = await get(await signToken(fx.privateJwk, edit(base, { [claim]: undefined })));
        assertErrorBody(res, 401, 'invalid_token');
      }
    }
    await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { client_id: '' })));
  });

  test(
    'a jti or sub that is not a non-empty string',
    async () => {
      for (const changes of [{ jti: 5 }, { jti: '' }, { sub: 123 }, { sub: '' }]) {
        await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), changes)));
      }
    },
  );

  test('a user token living longer than 10 minutes, or issued in the future', async () => {
    const now = Math.floor(Date.now() / 1000);
    await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { iat: now, exp: now + 3600 })), /10 minutes/);
    await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { iat: now + 600, exp: now + 900 })), /future/);
  });

  test('a missing or unknown principal_type', async () => {
    for (const principal_type of [undefined, 'admin', 'USER', '', 1]) {
      await assertInvalid(await signToken(fx.privateJwk, edit(userClaims(), { principal_type })), /principal_type/);
    }
  });

  test('a machine token not bound to a tenant application', async () => {
    for (const changes of [{ tenant_id: undefined }, { application_id: undefined }, { tenant_id: undefined, application_id: undefined }]) {
      await assertInvalid(await signToken(fx.privateJwk, edit(machineClaims(), changes)), /not bound/);
    }
  });

  test('typ other than at+jwt (an ID token shape)', async () => {
    for (const typ of ['JWT', 'jwt', 'application/jwt']) {
      await assertInvalid(await signToken(fx.privateJwk, userClaims(), { typ }));
    }
  });

  test('a kid the IdP never published', async () => {
    await assertInvalid(await signToken(fx.privateJwk, userClaims(), { kid: 'not-a-published-kid' }), /unknown key/);
  });
});
