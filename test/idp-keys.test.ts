/**
 * The development IdP keeps its signing key in its data directory: tokens issued before a
 * restart keep verifying after it (embedded in a node, and standalone); only /dev/rotate-keys
 * makes a new key, and the rotation survives a restart too, the retired key still published.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { DEFAULT_FIXTURE } from '../src/config/index.ts';
import { DevIdp } from '../src/idp/dev-idp.ts';
import { loadFixture } from '../src/idp/fixture.ts';
import { KEY_FILE_NAME } from '../src/idp/key-file.ts';
import { bearer, request } from './helpers/http.ts';
import { freePort, startTestIdp, startTestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'idp-keys-'));
const kidOf = (token: string): string | undefined => decodeProtectedHeader(token).kid;
const jwks = async (idp: string): Promise<JSONWebKeySet> => (await request(`${idp}/jwks.json`)).json() as JSONWebKeySet;

describe('the key file', () => {
  test('written once with mode 0600, reused by the next instance; a rotation is kept, the retired key published', async () => {
    const dir = tmp();
    try {
      const fixture = await loadFixture(DEFAULT_FIXTURE);
      const keyFile = path.join(dir, KEY_FILE_NAME);
      const first = new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true, keyFile });
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      const again = new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true, keyFile });
      assert.equal(again.currentKid, first.currentKid, 'same signing key after a restart');
      const rotated = again.rotateKeys();
      const third = new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true, keyFile });
      assert.equal(third.currentKid, rotated);
      assert.deepEqual(third.jwks().keys.map((k) => k.kid).sort(), [first.currentKid, rotated].sort());
      // Past the longest token lifetime the retired key is no longer published.
      const later = new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true, keyFile, now: () => Date.now() + 48 * 3600_000 });
      assert.deepEqual(later.jwks().keys.map((k) => k.kid), [rotated]);
      // Without a key file (tests constructing a DevIdp): a key of its own each time.
      assert.notEqual(new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true }).currentKid, new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true }).currentKid);
      fs.writeFileSync(keyFile, '{"keys": []}');
      assert.throws(() => new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true, keyFile }), /is not an IdP signing key file .*move it away/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('restarts', () => {
  test('a node restarted on its data directory accepts the tokens its embedded IdP issued before', async () => {
    const dataDir = tmp();
    const port = String(await freePort());
    try {
      let node = await startTestNode({ CHAT_DATA_DIR: dataDir, CHAT_PORT: port });
      const token = await userToken(node.idp, 'bob');
      await node.stop();
      node = await startTestNode({ CHAT_DATA_DIR: dataDir, CHAT_PORT: port });
      try {
        const res = await request(`${node.api}/me`, { headers: bearer(token) });
        assert.equal(res.status, 200, res.text);
        assert.equal(kidOf(await userToken(node.idp, 'bob')), kidOf(token));
      } finally {
        await node.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the standalone IdP keeps its key in IDP_DATA_DIR; rotate-keys survives a restart', async () => {
    const dataDir = tmp();
    const env = { IDP_DATA_DIR: dataDir, IDP_PORT: String(await freePort()) };
    try {
      let idp = await startTestIdp(env);
      const before = await machineToken(idp.url);
      await idp.stop();
      idp = await startTestIdp(env);
      try {
        const { payload } = await jwtVerify(before, createLocalJWKSet(await jwks(idp.url)), { issuer: idp.url });
        assert.equal(payload.client_id, 'acme-support-backend');
        const rotated = await request(`${idp.url}/dev/rotate-keys`, { method: 'POST' });
        assert.equal(rotated.status, 200, rotated.text);
        const kid = rotated.json().kid as string;
        await idp.stop();
        idp = await startTestIdp(env);
        assert.equal(kidOf(await machineToken(idp.url)), kid, 'the rotated key signs after the restart');
        await jwtVerify(before, createLocalJWKSet(await jwks(idp.url)), { issuer: idp.url });
      } finally {
        await idp.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
