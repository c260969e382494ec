/**
 * A graceful stop (SIGTERM) of a node on the in-process bus delivers the push jobs still queued
 * in memory before the process exits, within the shutdown grace period. One push at a time
 * (CHAT_PUSH_CONCURRENCY=1) and a push service that takes 300 ms per push keep jobs queued
 * behind the running one at the moment the node is told to stop.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { bearer, request } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { StandInPushService, type TestSubscription } from './helpers/push-service.ts';
import { userToken } from './helpers/tokens.ts';

let node: TestNode;
let push: StandInPushService;
let carol: TestSubscription;

const post = (url: string, token: string, body: unknown) => {
  const text = JSON.stringify(body);
  return request(url, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) }, body: text });
};

before(async () => {
  push = await StandInPushService.start();
  node = await startTestNode({ CHAT_PUSH_CA_FILE: push.caFile, CHAT_PUSH_CONCURRENCY: '1', CHAT_SHUTDOWN_GRACE_MS: '10000' });
  push.trustVapidKey((await request(`${node.api}/notifications/vapid-public-key`)).json().public_key as string);
  carol = push.subscribe();
  const res = await post(`${node.api}/tenants/acme/notifications/push/devices`, await userToken(node.idp, 'carol'), { platform: 'web', subscription: { ...carol.json, expirationTime: null } });
  assert.equal(res.status, 204, res.text);
});
after(async () => {
  await node?.stop();
  await push?.stop();
  if (node) fs.rmSync(node.dataDir, { recursive: true, force: true });
});

test('SIGTERM delivers the queued pushes before the node exits', async () => {
  const bob = await userToken(node.idp, 'bob');
  const app = `${node.api}/tenants/acme/applications/support`;
  const created = await post(`${app}/conversations`, bob, { type: 'GROUP', name: 'Chat', member_user_ids: ['carol'] });
  assert.equal(created.status, 201, created.text);
  const conversation = created.json().conversation_id as string;
  push.answer(carol, ...Array.from({ length: 4 }, () => ({ status: 201, delayMs: 300 })));
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const sent = await post(`${app}/conversations/${conversation}/messages`, bob, { body: `message ${i}` });
    assert.equal(sent.status, 201, sent.text);
    ids.push(sent.json().message_id as string);
  }
  assert.ok(push.received.length < 4, 'pushes were still queued when the node was told to stop');
  assert.equal(await node.stop(), 0, 'a clean exit');
  const got = push.received.filter((r) => r.subscription_id === carol.id).map((r) => (r.document as { data: { message_id: string } }).data.message_id);
  assert.deepEqual(got.sort(), [...ids].sort(), 'every queued push went out before the exit');
  assert.deepEqual(push.problems, []);
});
