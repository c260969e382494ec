/**
 * Web push end to end: a started node delivers to a local stand-in push service
 * (helpers/push-service.ts) that verifies the VAPID JWT against the published key and decrypts
 * the aes128gcm payload with the subscription's private key; the document is checked field by
 * field. Also: candidates per conversation type, online users skipped, 410 prunes, 5xx and
 * timeouts retried, and a send never waits for the push service.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { StandInPushService, type ReceivedPush, type TestSubscription } from './helpers/push-service.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
let push: StandInPushService;
const tok: Record<string, string> = {};
const subs: Record<string, TestSubscription> = {};
const app = () => `${node.api}/tenants/acme/applications/support`;
const jsonReq = (method: string, url: string, token: string, body: unknown): Promise<Res> => {
  const text = JSON.stringify(body);
  return request(url, { method, headers: { ...bearer(token), 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) }, body: text });
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function create(token: string, body: unknown): Promise<string> {
  const res = await jsonReq('POST', `${app()}/conversations`, token, body);
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.json().conversation_id as string;
}
async function sendMsg(token: string, conversation: string, body: unknown): Promise<{ message_id: string; ms: number }> {
  const t0 = Date.now();
  const res = await jsonReq('POST', `${app()}/conversations/${conversation}/messages`, token, body);
  const ms = Date.now() - t0;
  assert.equal(res.status, 201, res.text);
  return { message_id: res.json().message_id as string, ms };
}
async function register(token: string, sub: TestSubscription): Promise<void> {
  const res = await jsonReq('POST', `${node.api}/tenants/acme/notifications/push/devices`, token, { platform: 'web', subscription: { ...sub.json, expirationTime: null } });
  assert.equal(res.status, 204, res.text);
}
const pushesOf = (message_id: string, sub?: TestSubscription): ReceivedPush[] =>
  push.received.filter((r) => (r.document as { data: { message_id: string } }).data.message_id === message_id && (sub === undefined || r.subscription_id === sub.id));
const delivered = (message_id: string, sub: TestSubscription) => pushesOf(message_id, sub).filter((r) => r.status === 201);
/** Waits until each subscription got `message_id` delivered once, then a moment for any stray push. */
async function expectDelivered(message_id: string, to: TestSubscription[]): Promise<void> {
  await push.waitFor(() => to.every((s) => delivered(message_id, s).length >= 1), 10_000, `${message_id} at ${to.map((s) => s.id).join(', ')}`);
  await sleep(300);
}
function doc(r: ReceivedPush | undefined): { notification: { title: string; body: string }; data: Record<string, string> } {
  assert.ok(r, 'a push was received');
  return r.document as { notification: { title: string; body: string }; data: Record<string, string> };
}

before(async () => {
  push = await StandInPushService.start();
  node = await startTestNode({ CHAT_PUSH_CA_FILE: push.caFile, CHAT_RATE_SEND: '1000/10s', CHAT_PUSH_TIMEOUT_MS: '1500' });
  const key = await request(`${node.api}/notifications/vapid-public-key`);
  push.trustVapidKey(key.json().public_key as string);
  for (const u of ['bob', 'carol', 'frank']) tok[u] = await userToken(node.idp, u);
  tok.machine = await machineToken(node.idp);
  for (const name of ['bob', 'carol', 'frank1', 'frank2']) subs[name] = push.subscribe();
  await register(tok.bob!, subs.bob!);
  await register(tok.carol!, subs.carol!);
  await register(tok.frank!, subs.frank1!);
  await register(tok.frank!, subs.frank2!);
  await register(tok.frank!, subs.frank1!); // again: still one device
});
after(async () => {
  await node?.stop();
  await push?.stop();
  if (node) fs.rmSync(node.dataDir, { recursive: true, force: true });
});

describe('web push', () => {
  let group = '';
  before(async () => {
    group = await create(tok.bob!, { type: 'GROUP', name: 'Chat', member_user_ids: ['carol', 'frank'] });
  });

  test('GROUP: every other member, on every device, once; the document field by field; VAPID verified', async () => {
    const { message_id } = await sendMsg(tok.bob!, group, { body: 'hello team' });
    await expectDelivered(message_id, [subs.carol!, subs.frank1!, subs.frank2!]);
    assert.deepEqual(push.problems, []);
    assert.equal(pushesOf(message_id, subs.bob!).length, 0, 'never to the sender');
    for (const s of [subs.carol!, subs.frank1!, subs.frank2!]) assert.equal(pushesOf(message_id, s).length, 1, 'once per device');
    const r = delivered(message_id, subs.carol!)[0];
    const d = doc(r);
    assert.deepEqual(Object.keys(d).sort(), ['data', 'notification']);
    assert.deepEqual(d.notification, { title: 'Bob Baker', body: 'hello team' });
    assert.deepEqual(d.data, { tenant_id: 'acme', application_id: 'support', conversation_id: group, message_id });
    assert.equal(r?.jwt.aud, push.origin);
    assert.match(String(r?.jwt.sub), /^(mailto:|https:)/);
    assert.ok(Number(r?.ttl) > 0, 'TTL header');
  });

  test('preview: 200 characters then an ellipsis; exactly 200 untouched; the text never in data', async () => {
    const long = `${'a'.repeat(199)}😀${'b'.repeat(50)}`;
    const m1 = await sendMsg(tok.bob!, group, { body: long });
    const exact = 'c'.repeat(200);
    const m2 = await sendMsg(tok.bob!, group, { body: exact });
    await expectDelivered(m1.message_id, [subs.carol!]);
    await expectDelivered(m2.message_id, [subs.carol!]);
    const d1 = doc(delivered(m1.message_id, subs.carol!)[0]);
    assert.equal(d1.notification.body, `${'a'.repeat(199)}😀…`);
    // (A run of 20 is the text; a short run like 'aaa' can occur in a random UUID.)
    assert.equal(JSON.stringify(d1.data).includes('a'.repeat(20)), false);
    assert.deepEqual(Object.keys(d1.data).sort(), ['application_id', 'conversation_id', 'message_id', 'tenant_id']);
    assert.equal(doc(delivered(m2.message_id, subs.carol!)[0]).notification.body, exact);
  });

  test('no text: the attachment word; a sender without display name (a backend sending as frank): the user id', async () => {
    const { message_id } = await sendMsg(tok.machine!, group, { actor_user_id: 'frank', body: '', attachments: [{ file_id: 'f1', name: 'report.pdf', mime_type: 'application/pdf', size: 1234 }] });
    await expectDelivered(message_id, [subs.carol!, subs.bob!]);
    assert.deepEqual(doc(delivered(message_id, subs.carol!)[0]).notification, { title: 'frank', body: 'Attachment' });
    assert.equal(pushesOf(message_id, subs.frank1!).length, 0);
  });

  test('no sender: the conversation name, else "New message"', async () => {
    const sys = await sendMsg(tok.machine!, group, { body: 'Maintenance tonight', message_type: 'SYSTEM' });
    await expectDelivered(sys.message_id, [subs.bob!, subs.carol!, subs.frank1!]);
    assert.deepEqual(doc(delivered(sys.message_id, subs.bob!)[0]).notification, { title: 'Chat', body: 'Maintenance tonight' });

    const direct = await create(tok.bob!, { type: 'DIRECT', member_user_ids: ['carol'] });
    const dm = await sendMsg(tok.machine!, direct, { body: 'System notice', message_type: 'SYSTEM' });
    await expectDelivered(dm.message_id, [subs.bob!, subs.carol!]);
    assert.equal(doc(delivered(dm.message_id, subs.carol!)[0]).notification.title, 'New message');
  });

  test('CHANNEL: only mentioned active members; edits never push', async () => {
    const channel = await create(tok.machine!, { type: 'CHANNEL', name: 'news', member_user_ids: ['bob', 'frank'], actor_user_id: 'carol' });
    const plain = await sendMsg(tok.carol!, channel, { body: 'no mentions' });
    const mention = await sendMsg(tok.carol!, channel, { body: 'hey @frank', mentioned_user_ids: ['frank'] });
    await expectDelivered(mention.message_id, [subs.frank1!, subs.frank2!]);
    assert.equal(pushesOf(mention.message_id, subs.bob!).length, 0, 'bob was not mentioned');
    assert.equal(pushesOf(plain.message_id).length, 0, 'a channel message without mentions pushes to nobody');

    const before = push.received.length;
    const e2 = await jsonReq('PATCH', `${app()}/conversations/${channel}/messages/${mention.message_id}`, tok.carol!, { body: 'edited @frank', mentioned_user_ids: ['frank'] });
    assert.equal(e2.status, 200, e2.text);
    await sleep(500);
    assert.equal(push.received.length, before, 'an edit sends no push');
  });

  test('a 410 from the push service removes the subscription; the other devices keep receiving', async () => {
    push.answer(subs.frank2!, 410);
    const m1 = await sendMsg(tok.bob!, group, { body: 'first' });
    await expectDelivered(m1.message_id, [subs.frank1!]);
    await push.waitFor(() => pushesOf(m1.message_id, subs.frank2!).length === 1);
    assert.equal(pushesOf(m1.message_id, subs.frank2!)[0]?.status, 410);
    const m2 = await sendMsg(tok.bob!, group, { body: 'second' });
    await expectDelivered(m2.message_id, [subs.frank1!, subs.carol!]);
    assert.equal(pushesOf(m2.message_id, subs.frank2!).length, 0, 'pruned: no more requests');
  });

  test('a 503 is retried with backoff; devices already served are not pushed twice', async () => {
    push.answer(subs.carol!, 503);
    const { message_id } = await sendMsg(tok.bob!, group, { body: 'retry me' });
    await expectDelivered(message_id, [subs.carol!, subs.frank1!]);
    assert.deepEqual(pushesOf(message_id, subs.carol!).map((r) => r.status), [503, 201]);
    assert.equal(pushesOf(message_id, subs.frank1!).length, 1);
  });

  test('a hanging push service never slows a send; the timed-out push is retried and delivered', async () => {
    push.answer(subs.carol!, 'hang');
    push.answer(subs.frank1!, 'hang', 'hang');
    const sends = [];
    for (let i = 0; i < 5; i += 1) sends.push(await sendMsg(tok.bob!, group, { body: `while down ${i}` }));
    for (const s of sends) assert.ok(s.ms < 1000, `send answered 201 in ${s.ms} ms`);
    await expectDelivered(sends[0]!.message_id, [subs.carol!, subs.frank1!]);
  });

  test('an online user (recent heartbeat) gets no push; offline members still do', async () => {
    const hb = await request(`${node.api}/tenants/acme/presence/heartbeat`, { method: 'POST', headers: bearer(tok.carol!) });
    assert.equal(hb.status, 204);
    const { message_id } = await sendMsg(tok.bob!, group, { body: 'carol is here' });
    await expectDelivered(message_id, [subs.frank1!]);
    assert.equal(pushesOf(message_id, subs.carol!).length, 0);
  });

  test('a message whose candidates are all online makes no push job, and is counted', async () => {
    const metric = async (): Promise<number> => Number(/^chat_push_jobs_skipped_online_total (\d+)/m.exec((await request(`http://127.0.0.1:${node.metricsPort}/metrics`)).text)?.[1] ?? -1);
    const before = await metric();
    const hb = await request(`${node.api}/tenants/acme/presence/heartbeat`, { method: 'POST', headers: bearer(tok.frank!) });
    assert.equal(hb.status, 204);
    const { message_id } = await sendMsg(tok.bob!, group, { body: 'carol and frank are both here' });
    await sleep(800);
    for (const s of [subs.carol!, subs.frank1!, subs.frank2!]) assert.equal(pushesOf(message_id, s).length, 0);
    assert.equal(await metric(), before + 1);
  });

  test('an unregistered device receives nothing more', async () => {
    const res = await jsonReq('DELETE', `${node.api}/tenants/acme/notifications/push/devices`, tok.bob!, { token: subs.bob!.json.endpoint });
    assert.equal(res.status, 204);
    const { message_id } = await sendMsg(tok.carol!, group, { body: 'bob unsubscribed' });
    await sleep(800);
    assert.equal(pushesOf(message_id, subs.bob!).length, 0);
    assert.deepEqual(push.problems, []);
  });

  test('metrics count the outcomes', async () => {
    const text = (await request(`http://127.0.0.1:${node.metricsPort}/metrics`)).text;
    const value = (outcome: string) => Number(new RegExp(`^chat_push_notifications_total\\{outcome="${outcome}",platform="web"\\} (\\d+)`, 'm').exec(text)?.[1] ?? -1);
    assert.ok(value('sent') >= 10, text);
    assert.equal(value('pruned'), 1);
    assert.ok(value('retried') >= 1);
    assert.ok(value('skipped_online') >= 1);
  });
});
