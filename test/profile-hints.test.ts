/**
 * A machine's profile hints (display_name, avatar_url on add-member) apply only to a user the
 * service has never seen; a user it has seen keeps what the IdP said, even when the IdP has no
 * display name for them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, request, type Res } from './helpers/http.ts';
import { writeTestFixture, type TestFixture } from './helpers/fixture.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
let fixture: TestFixture;
const tok: Record<string, string> = {};
const base = () => `${node.api}/tenants/acme/applications/support`;
const call = (method: string, path: string, token: string, body?: unknown): Promise<Res> =>
  request(`${base()}${path}`, { method, headers: { ...bearer(token), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

// acme members: nora and nils have no display name at the IdP (nora never calls, nils first
// sends); nick has a name but no avatar.
const ADDED = [
  { user_id: 'nora', display_name: null },
  { user_id: 'nils', display_name: null },
  { user_id: 'nick', display_name: 'Nick Noble' },
];

before(async () => {
  fixture = await writeTestFixture({
    edit: (f) => {
      for (const { user_id, display_name } of ADDED) {
        f.users.push({ user_id, display_name, avatar_url: null, status: 'ACTIVE' });
        f.tenants.find((t) => t.tenant_id === 'acme')?.members.push({ user_id, status: 'ACTIVE', tenant_roles: ['tenant_member'], applications: {} });
      }
    },
  });
  node = await startTestNode({ CHAT_IDP_FIXTURE: fixture.path });
  tok.bob = await userToken(node.idp, 'bob');
  tok.nils = await userToken(node.idp, 'nils');
  tok.machine = await machineToken(node.idp);
});
after(async () => {
  await node?.stop();
  await fixture?.remove();
});

async function group(): Promise<string> {
  const res = await call('POST', '/conversations', tok.machine!, { type: 'GROUP', name: 'hints', member_user_ids: ['bob'], actor_user_id: 'bob' });
  assert.equal(res.status, 201, res.text);
  return res.json().conversation_id as string;
}

test('a user never seen takes the hints where the IdP has nothing', async () => {
  const g = await group();
  const nora = await call('POST', `/conversations/${g}/members`, tok.machine!, { user_id: 'nora', display_name: 'Nora (hint)', avatar_url: 'https://img.example/n.png' });
  assert.equal(nora.status, 201, nora.text);
  assert.deepEqual([nora.json().display_name, nora.json().avatar_url], ['Nora (hint)', 'https://img.example/n.png']);
  // nick has a display name at the IdP but no avatar: the name stands, the avatar hint fills in.
  const nick = await call('POST', `/conversations/${g}/members`, tok.machine!, { user_id: 'nick', display_name: 'N. (hint)', avatar_url: 'https://img.example/k.png' });
  assert.equal(nick.status, 201, nick.text);
  assert.deepEqual([nick.json().display_name, nick.json().avatar_url], ['Nick Noble', 'https://img.example/k.png']);
});

test('a user already seen (first as a sender, no display name at the IdP) keeps the IdP profile', async () => {
  const d = await call('POST', '/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: ['nils'] });
  assert.equal(d.status, 201, d.text);
  const sent = await call('POST', `/conversations/${d.json().conversation_id as string}/messages`, tok.nils!, { body: 'hello' });
  assert.equal(sent.status, 201, sent.text);
  assert.equal(sent.json().sender.display_name, 'nils', 'no display name: the user id');

  const g = await group();
  const added = await call('POST', `/conversations/${g}/members`, tok.machine!, { user_id: 'nils', display_name: 'Impostor', avatar_url: 'https://img.example/x.png' });
  assert.equal(added.status, 201, added.text);
  assert.deepEqual([added.json().display_name, added.json().avatar_url], ['nils', null]);
  const members = await call('GET', `/conversations/${g}/members`, tok.bob!);
  const nils = (members.json().items as { user_id: string; display_name: string }[]).find((m) => m.user_id === 'nils');
  assert.equal(nils?.display_name, 'nils');
  const again = await call('POST', `/conversations/${d.json().conversation_id as string}/messages`, tok.nils!, { body: 'still me' });
  assert.equal(again.json().sender.display_name, 'nils');
});
