/**
 * APNs delivery through the real PushWorker (SQLite store, in-process bus with pushRetryPolicy)
 * to a stand-in APNs over HTTP/2 and TLS (helpers/push-apns.ts) that verifies the ES256 provider
 * token with the .p8 key's public key, the apns-* headers and the payload. Checked: the payload
 * field by field, one HTTP/2 session and one provider token across pushes, online users and the
 * sender skipped, 410 and 400 BadDeviceToken pruned, 429 retried (no sooner than its
 * Retry-After), a GOAWAY followed by a new session.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ApnsSender } from '../src/push/apns-sender.ts';
import { createPushSenders } from '../src/push/index.ts';
import { StandInApns, type ReceivedApns } from './helpers/push-apns.ts';
import { APP, startPushKit, TENANT, type PushKit } from './helpers/push-kit.ts';

let apns: StandInApns;
let sender: ApnsSender;
let kit: PushKit;
const tok: Record<string, string> = {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const of = (message_id: string, token?: string): ReceivedApns[] => apns.received.filter((r) => r.payload.message_id === message_id && (token === undefined || r.token === token));
const sentTo = (message_id: string, names: string[]) =>
  apns.waitFor(() => names.every((n) => of(message_id, tok[n]).some((r) => r.status === 200)), `${message_id} at ${names.join(', ')}`);

before(async () => {
  apns = await StandInApns.start();
  const senders = createPushSenders({
    vapid: null,
    fcm: null,
    apns: { keyFile: apns.keyFile, keyId: apns.keyId, teamId: apns.teamId, topic: apns.topic, origin: apns.origin },
    timeoutMs: 1500,
    caFile: apns.caFile,
  });
  assert.ok(senders.apns instanceof ApnsSender);
  sender = senders.apns;
  kit = await startPushKit(senders);
  for (const name of ['bob', 'carol', 'frank1', 'frank2', 'dave']) {
    tok[name] = crypto.randomBytes(32).toString('hex');
    await kit.register(name.replace(/\d$/, ''), 'apns', tok[name]);
  }
  await kit.register('carol', 'fcm', 'fcm-carol');
  await kit.presence.heartbeat(TENANT, 'dave', Date.now());
});
after(async () => {
  await kit?.close();
  await apns?.stop();
});

describe('apns push', () => {
  test('every offline member but the sender, on every device, once; headers and payload; one session, one provider token', async () => {
    const m1 = await kit.send('hello team');
    await sentTo(m1, ['carol', 'frank1', 'frank2']);
    const m2 = await kit.send('again');
    await sentTo(m2, ['carol', 'frank1', 'frank2']);
    await sleep(200);
    assert.deepEqual(apns.problems, []);
    const r = of(m1, tok.carol)[0];
    assert.deepEqual(r?.payload, {
      aps: { alert: { title: 'Bob Baker', body: 'hello team' }, sound: 'default' },
      tenant_id: TENANT, application_id: APP, conversation_id: kit.conversation_id, message_id: m1,
    });
    assert.equal(r?.headers['apns-topic'], apns.topic);
    assert.equal(r?.headers['apns-push-type'], 'alert');
    assert.equal(r?.headers['apns-priority'], '10');
    const expiration = Number(r?.headers['apns-expiration']);
    assert.ok(expiration > Date.now() / 1000 + 3600, 'apns-expiration ahead');
    assert.equal(of(m1).length, 3, 'never the sender, never dave (online)');
    assert.equal(new Set(apns.received.map((x) => x.jwt)).size, 1, 'one provider token');
    assert.equal(apns.sessionsOpened, 1, 'one HTTP/2 session');
    assert.equal(sender.http.connects, 1);
    assert.equal(kit.worker.stats.platforms.fcm.skippedUnconfigured, 2);
  });

  test('the text is never beside aps: custom keys are exactly the four ids', async () => {
    const m = await kit.send(`${'q'.repeat(230)}`);
    await sentTo(m, ['carol']);
    const p = of(m, tok.carol)[0]?.payload ?? {};
    assert.deepEqual(Object.keys(p).sort(), ['application_id', 'aps', 'conversation_id', 'message_id', 'tenant_id']);
    assert.equal((p.aps as { alert: { body: string } }).alert.body, `${'q'.repeat(200)}…`);
  });

  test('410 Unregistered and 400 BadDeviceToken prune the device; the others keep receiving', async () => {
    tok.carol2 = crypto.randomBytes(32).toString('hex');
    await kit.register('carol', 'apns', tok.carol2);
    apns.answer(tok.frank2!, { status: 410, reason: 'Unregistered' });
    apns.answer(tok.carol2, { status: 400, reason: 'BadDeviceToken' });
    const m1 = await kit.send('first');
    await sentTo(m1, ['frank1', 'carol']);
    await apns.waitFor(() => kit.worker.stats.platforms.apns.pruned === 2, 'pruning');
    assert.deepEqual(await kit.devices('frank'), [tok.frank1]);
    assert.ok(!(await kit.devices('carol')).includes(tok.carol2));
    const m2 = await kit.send('second');
    await sentTo(m2, ['frank1', 'carol']);
    await sleep(200);
    assert.equal(of(m2, tok.frank2).length + of(m2, tok.carol2).length, 0, 'pruned: no more requests');
  });

  test('429 is retried no sooner than its Retry-After, only to the device that failed', async () => {
    apns.answer(tok.carol!, { status: 429, reason: 'TooManyRequests', retryAfter: '1' });
    const m = await kit.send('slow down');
    await sentTo(m, ['carol', 'frank1']);
    const tries = of(m, tok.carol);
    assert.deepEqual(tries.map((r) => r.status), [429, 200]);
    const waited = (tries[1]?.at ?? 0) - (tries[0]?.at ?? 0);
    assert.ok(waited >= 1000, `retried after ${waited} ms`);
    assert.equal(of(m, tok.frank1).length, 1);
  });

  test('429 and 503 without Retry-After are retried with backoff', async () => {
    apns.answer(tok.frank1!, { status: 429, reason: 'TooManyRequests' }, { status: 503, reason: 'ServiceUnavailable' });
    const m = await kit.send('busy');
    await sentTo(m, ['frank1', 'carol']);
    assert.deepEqual(of(m, tok.frank1).map((r) => r.status), [429, 503, 200]);
    assert.equal(of(m, tok.carol).length, 1);
  });

  test('another refusal (DeviceTokenNotForTopic) is rejected: logged, not retried, the device kept', async () => {
    apns.answer(tok.carol!, { status: 400, reason: 'DeviceTokenNotForTopic' });
    const m = await kit.send('wrong app');
    await sentTo(m, ['frank1']);
    await apns.waitFor(() => of(m, tok.carol).length === 1, 'the refusal');
    await sleep(700);
    assert.equal(of(m, tok.carol).length, 1, 'not retried');
    assert.ok((await kit.devices('carol')).includes(tok.carol!));
    assert.ok(kit.logs.some((l) => l.msg === 'push service refused a notification' && l.obj.reason === 'DeviceTokenNotForTopic'));
  });

  test('after a GOAWAY the next push opens a new session', async () => {
    apns.goaway();
    await sleep(100);
    const m = await kit.send('after goaway');
    await sentTo(m, ['carol', 'frank1']);
    assert.equal(apns.sessionsOpened, 2);
    assert.equal(sender.http.connects, 2);
    assert.deepEqual(kit.givenUp, []);
    assert.deepEqual(apns.problems, []);
  });
});
