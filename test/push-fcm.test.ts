/**
 * FCM delivery through the real PushWorker (SQLite store, in-process bus with pushRetryPolicy)
 * to a stand-in FCM (helpers/push-fcm.ts) that verifies the service account's JWT grant with its
 * public key and the bearer token on every send. Checked: the message field by field, the access
 * token cached, online users and the sender skipped, apns devices skipped without a sender,
 * UNREGISTERED and an invalid token pruned, 429 retried no sooner than its Retry-After, 503
 * and timeouts retried, other 4xx not retried.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPushSenders } from '../src/push/index.ts';
import { StandInFcm, type ReceivedFcm } from './helpers/push-fcm.ts';
import { APP, startPushKit, TENANT, type PushKit } from './helpers/push-kit.ts';

let fcm: StandInFcm;
let kit: PushKit;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const of = (message_id: string, token?: string): ReceivedFcm[] =>
  fcm.received.filter((r) => (r.body.message?.data as Record<string, string>).message_id === message_id && (token === undefined || r.token === token));
const sentTo = (message_id: string, tokens: string[]) => fcm.waitFor(() => tokens.every((t) => of(message_id, t).some((r) => r.status === 200)), `${message_id} at ${tokens.join(', ')}`);

before(async () => {
  fcm = await StandInFcm.start();
  const senders = createPushSenders({
    vapid: null,
    apns: null,
    fcm: { serviceAccountFile: fcm.serviceAccountFile, projectId: null, endpoint: fcm.origin, tokenUri: null },
    timeoutMs: 1500,
    caFile: fcm.caFile,
  });
  kit = await startPushKit(senders);
  await kit.register('bob', 'fcm', 'fcm-bob');
  await kit.register('carol', 'fcm', 'fcm-carol');
  await kit.register('carol', 'apns', 'apns-carol');
  await kit.register('frank', 'fcm', 'fcm-frank-1');
  await kit.register('frank', 'fcm', 'fcm-frank-2');
  await kit.register('dave', 'fcm', 'fcm-dave');
  await kit.presence.heartbeat(TENANT, 'dave', Date.now());
});
after(async () => {
  await kit?.close();
  await fcm?.stop();
});

describe('fcm push', () => {
  test('every offline member but the sender, on every device, once; the message field by field; one access token', async () => {
    const m1 = await kit.send('hello team');
    const m2 = await kit.send('again');
    await sentTo(m1, ['fcm-carol', 'fcm-frank-1', 'fcm-frank-2']);
    await sentTo(m2, ['fcm-carol', 'fcm-frank-1', 'fcm-frank-2']);
    await sleep(200);
    assert.deepEqual(fcm.problems, []);
    assert.deepEqual(of(m1, 'fcm-carol').map((r) => r.body), [{
      message: {
        token: 'fcm-carol',
        notification: { title: 'Bob Baker', body: 'hello team' },
        data: { tenant_id: TENANT, application_id: APP, conversation_id: kit.conversation_id, message_id: m1 },
        android: { priority: 'high' },
      },
    }]);
    assert.equal(of(m1).length, 3, 'once per device; never the sender, never dave (online)');
    assert.equal(of(m1, 'fcm-bob').length + of(m1, 'fcm-dave').length, 0);
    assert.equal(fcm.issued.size, 1, 'the access token is cached across sends');
    const apns = kit.worker.stats.platforms.apns;
    assert.equal(apns.skippedUnconfigured, 2, "carol's apns device, once per message");
    assert.equal(kit.logs.filter((l) => l.obj.platform === 'apns' && l.level === 'warn').length, 1, 'logged once');
    assert.ok(kit.worker.stats.platforms.fcm.skippedOnline >= 2);
  });

  test('the preview is cut at 200 characters; the text is never in data', async () => {
    const m = await kit.send(`${'s'.repeat(250)}`);
    await sentTo(m, ['fcm-carol']);
    const msg = of(m, 'fcm-carol')[0]?.body.message as { notification: { body: string }; data: Record<string, string> };
    assert.equal(msg.notification.body, `${'s'.repeat(200)}…`);
    assert.equal(JSON.stringify(msg.data).includes('s'.repeat(20)), false);
    assert.deepEqual(Object.keys(msg.data).sort(), ['application_id', 'conversation_id', 'message_id', 'tenant_id']);
  });

  test('404 UNREGISTERED and 400 INVALID_ARGUMENT on the token prune the device; the others keep receiving', async () => {
    await kit.register('carol', 'fcm', 'fcm-carol-old');
    fcm.answer('fcm-frank-2', 'unregistered');
    fcm.answer('fcm-carol-old', 'invalid-token');
    const m1 = await kit.send('first');
    await sentTo(m1, ['fcm-frank-1', 'fcm-carol']);
    await fcm.waitFor(() => of(m1, 'fcm-frank-2').length === 1 && of(m1, 'fcm-carol-old').length === 1, 'the refused sends');
    await fcm.waitFor(() => kit.worker.stats.platforms.fcm.pruned === 2, 'pruning');
    assert.deepEqual(await kit.devices('frank'), ['fcm-frank-1']);
    assert.deepEqual((await kit.devices('carol')).sort(), ['apns-carol', 'fcm-carol']);
    const m2 = await kit.send('second');
    await sentTo(m2, ['fcm-frank-1', 'fcm-carol']);
    await sleep(200);
    assert.equal(of(m2, 'fcm-frank-2').length + of(m2, 'fcm-carol-old').length, 0, 'pruned: no more requests');
  });

  test('429 with Retry-After: retried no sooner than asked, only to the device that failed', async () => {
    fcm.answer('fcm-carol', { status: 429, retryAfter: '1' });
    const m = await kit.send('slow down');
    await sentTo(m, ['fcm-carol', 'fcm-frank-1']);
    const tries = of(m, 'fcm-carol');
    assert.deepEqual(tries.map((r) => r.status), [429, 200]);
    const waited = (tries[1]?.at ?? 0) - (tries[0]?.at ?? 0);
    assert.ok(waited >= 1000, `retried after ${waited} ms`);
    assert.equal(of(m, 'fcm-frank-1').length, 1, 'a served device is not pushed twice');
  });

  test('503 is retried with backoff and delivered', async () => {
    const before = kit.worker.stats.platforms.fcm.retried;
    fcm.answer('fcm-frank-1', 503, 503);
    const m = await kit.send('flaky');
    await sentTo(m, ['fcm-frank-1', 'fcm-carol']);
    assert.deepEqual(of(m, 'fcm-frank-1').map((r) => r.status), [503, 503, 200]);
    assert.equal(of(m, 'fcm-carol').length, 1);
    assert.equal(kit.worker.stats.platforms.fcm.retried, before + 2);
  });

  test('a hanging FCM times out; the send is retried and delivered', async () => {
    fcm.answer('fcm-carol', 'hang');
    const m = await kit.send('are you there');
    await sentTo(m, ['fcm-carol', 'fcm-frank-1']);
    assert.equal(of(m, 'fcm-frank-1').length, 1);
  });

  test('another 4xx is rejected: logged, not retried, the device kept', async () => {
    fcm.answer('fcm-carol', 403);
    const m = await kit.send('forbidden');
    await sentTo(m, ['fcm-frank-1']);
    await fcm.waitFor(() => of(m, 'fcm-carol').length === 1, 'the 403');
    await sleep(700);
    assert.equal(of(m, 'fcm-carol').length, 1, 'not retried');
    assert.ok((await kit.devices('carol')).includes('fcm-carol'));
    assert.ok(kit.logs.some((l) => l.msg === 'push service refused a notification' && l.obj.status === 403 && l.obj.platform === 'fcm'));
    assert.deepEqual(kit.givenUp, []);
    assert.deepEqual(fcm.problems, []);
  });
});
