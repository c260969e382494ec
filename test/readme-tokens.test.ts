/**
 * A new user's way in: the README's token commands (and the docs' example setup) work unchanged
 * against a single node; the cluster's balancer is covered in test/cluster-launcher.test.ts. An
 * IdP whose issuer is an address the nodes cannot reach (a balancer's) is still read through
 * CHAT_IDP_URL, and a node with an IdP of its own says where it is on a 404 under /idp.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { onPath } from '../cluster/lib/tools.ts';
import { assertErrorBody, bearer, request } from './helpers/http.ts';
import { freePort, startTestIdp, startTestNode } from './helpers/processes.ts';
import { assertDocumentedOutput, documentedTokenScript, runBash } from './helpers/readme-commands.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

const TOOLS = onPath('curl') && onPath('jq');

describe('the documented token commands', { skip: TOOLS ? false : 'curl or jq is not installed (apt-get install -y curl jq; .ci/run installs them)' }, () => {
  test('work unchanged against a single node (npm start)', async () => {
    const node = await startTestNode({ CHAT_PORT: String(await freePort()) });
    try {
      const { stdout } = await runBash(documentedTokenScript(node.origin));
      assertDocumentedOutput(stdout);
    } finally {
      await node.stop();
    }
  });
});

describe('an IdP behind a load balancer', () => {
  test('its issuer may be an address the node cannot reach: discovery, JWKS and directory are read through CHAT_IDP_URL', async () => {
    // The issuer names a balancer the node cannot reach (port 1); the IdP serves under its path.
    const idp = await startTestIdp({ IDP_ISSUER: 'http://127.0.0.1:1/idp' });
    const direct = `${idp.url}/idp`;
    const node = await startTestNode({ CHAT_IDP: 'http', CHAT_IDP_URL: direct }).catch(async (err: unknown) => {
      await idp.stop();
      throw err;
    });
    try {
      const discovery = (await request(`${direct}/.well-known/openid-configuration`)).json() as Record<string, string>;
      assert.equal(discovery.issuer, 'http://127.0.0.1:1/idp');
      assert.equal(discovery.jwks_uri, 'http://127.0.0.1:1/idp/jwks.json');
      const outside = await request(`${idp.url}/jwks.json`);
      assert.equal(outside.status, 404, 'nothing outside the base path');
      assert.match(outside.json().error_description as string, /serves under \/idp\//);

      const bob = await userToken(direct, 'bob');
      const me = await request(`${node.api}/me`, { headers: bearer(bob) });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.json().display_name, 'Bob Baker', 'the directory answered');
      const machine = await machineToken(direct);
      assert.equal((await request(`${node.api}/tenants/acme/applications/support/me/capabilities`, { headers: bearer(machine) })).status, 200);

      // The node has no IdP of its own: a 404 under /idp says where the IdP is.
      const lost = assertErrorBody(await request(`${node.origin}/idp/dev/login`, { method: 'POST' }), 404, 'not_found', '/idp/dev/login');
      assert.match(lost.message as string, new RegExp(`identity provider runs on its own at ${direct.replace(/[.]/g, '\\.')}`));
    } finally {
      await node.stop();
      await idp.stop();
    }
  });
});
