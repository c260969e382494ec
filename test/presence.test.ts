/** Presence over HTTP: heartbeats, the online window, member filtering, users only, tenant CORS. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

/** Short on purpose: the window must pass within the test. */
const WINDOW_MS = 500;

let node: TestNode;
const tok: Record<string, string> = {};
const heartbeat = (token: string, tenant = 'acme'): Promise<Res> => request(`${node.api}/tenants/${tenant}/presence/heartbeat`, { method: 'POST', headers: bearer(token) });
const presence = (token: string, query = '', tenant = 'acme'): Promise<Res> => request(`${node.api}/tenants/${tenant}/presence${query}`, { headers: bearer(token) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  node = await startTestNode({ CHAT_PRESENCE_WINDOW_MS: String(WINDOW_MS) });
  for (const u of ['bob', 'carol', 'frank', 'grace']) tok[u] = await userToken(node.idp, u);
  tok.erin = await userToken(node.idp, 'erin', 'chat-web');
  tok.machine = await machineToken(node.idp);
});
after(async () => {
  await node.stop();
  fs.rmSync(node.dataDir, { recursive: true, force: true });
});

describe('presence', () => {
  test('a heartbeat answers 204 with no body; the user is online, then offline once the window passes', async () => {
    const hb = await heartbeat(tok.carol!);
    assert.equal(hb.status, 204, hb.text);
    assert.equal(hb.text, '');
    const before = Date.now();
    const res = await presence(tok.bob!, '?user_ids=carol');
    assert.equal(res.status, 200, res.text);
    const [entry] = res.json().items;
    assert.equal(entry.user_id, 'carol');
    assert.equal(entry.status, 'online');
    assert.ok(Math.abs(Date.parse(entry.last_seen_at) - before) < 5000, entry.last_seen_at);
    assert.deepEqual(Object.keys(entry).sort(), ['last_seen_at', 'status', 'user_id']);

    await sleep(WINDOW_MS + 300);
    const later = (await presence(tok.bob!, '?user_ids=carol')).json().items[0];
    assert.equal(later.status, 'offline');
    assert.equal(later.last_seen_at, entry.last_seen_at, 'last_seen_at stays the last heartbeat');
  });

  test('ids that are not active members of the tenant are dropped; order and dedup kept', async () => {
    await heartbeat(tok.frank!);
    // erin: member of globex only; dave: suspended in acme; mallory: no membership; nobody: unknown
    const res = await presence(tok.bob!, '?user_ids=frank,erin,dave,mallory,nobody,grace,frank,,bob');
    assert.equal(res.status, 200, res.text);
    const items = res.json().items as Array<{ user_id: string; status: string; last_seen_at: string | null }>;
    assert.deepEqual(items.map((e) => e.user_id), ['frank', 'grace', 'bob']);
    assert.equal(items[0]!.status, 'online');
    assert.deepEqual(items[1], { user_id: 'grace', status: 'offline', last_seen_at: null }, 'never seen');
  });

  test('per account: a heartbeat in one tenant says nothing in another', async () => {
    const alice = await userToken(node.idp, 'alice', 'chat-web');
    assert.equal((await heartbeat(alice, 'globex')).status, 204);
    const inAcme = (await presence(tok.bob!, '?user_ids=alice')).json().items[0];
    assert.equal(inAcme.status, 'offline');
    const inGlobex = (await presence(tok.erin!, '?user_ids=alice', 'globex')).json().items[0];
    assert.equal(inGlobex.status, 'online');
  });

  test("user_ids omitted: the caller's own entry", async () => {
    await heartbeat(tok.grace!);
    const res = await presence(tok.grace!);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json().items.map((e: { user_id: string; status: string }) => [e.user_id, e.status]), [['grace', 'online']]);
  });

  test('more than 100 distinct ids is invalid_request; 100 is fine; unknown query fields refused', async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `u${i}`).join(',');
    assertErrorBody(await presence(tok.bob!, `?user_ids=${ids(101)}`), 400, 'invalid_request');
    const ok = await presence(tok.bob!, `?user_ids=${ids(100)}`);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json().items, []);
    assertErrorBody(await presence(tok.bob!, '?users=bob'), 400, 'invalid_request');
  });

  test('machines are refused: heartbeat user_required, read principal_not_allowed', async () => {
    assertErrorBody(await heartbeat(tok.machine!), 403, 'user_required');
    assertErrorBody(await presence(tok.machine!, '?user_ids=bob'), 403, 'principal_not_allowed');
  });

  test('no token is invalid_token; a user of another tenant is not_tenant_member', async () => {
    assertErrorBody(await request(`${node.api}/tenants/acme/presence`), 401, 'invalid_token');
    assertErrorBody(await heartbeat(tok.erin!), 403, 'not_tenant_member');
    assertErrorBody(await presence(tok.erin!, '?user_ids=bob'), 403, 'not_tenant_member');
  });

  test('tenant CORS: an origin of any application client of the tenant may call it; others get no CORS headers', async () => {
    for (const origin of ['https://support.acme.test', 'https://internal.acme.test']) {
      const res = await request(`${node.api}/tenants/acme/presence?user_ids=bob`, { headers: { ...bearer(tok.bob!), Origin: origin } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['access-control-allow-origin'], origin);
    }
    const evil = await request(`${node.api}/tenants/acme/presence/heartbeat`, { method: 'POST', headers: { ...bearer(tok.bob!), Origin: 'http://evil.test' } });
    assert.equal(evil.headers['access-control-allow-origin'], undefined);
  });
});
