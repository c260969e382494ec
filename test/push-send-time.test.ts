/**
 * The devices a message pushes to are those registered by the time it was sent: a device
 * registered while the job waits for a retry (or before a late first attempt) never receives
 * that older message, on the job's first attempt or any retry. Real PushWorker, SQLite store,
 * in-process bus, web push to a stand-in push service.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import webpush from 'web-push';
import { PushWorker } from '../src/push/push-worker.ts';
import { WebPushSender } from '../src/push/web-push-sender.ts';
import { APP, TENANT, startPushKit, type PushKit } from './helpers/push-kit.ts';
import { StandInPushService, type ReceivedPush, type TestSubscription } from './helpers/push-service.ts';

let push: StandInPushService;
const vapid = { ...webpush.generateVAPIDKeys(), subject: 'mailto:ops@example.com' };
before(async () => {
  push = await StandInPushService.start();
  push.trustVapidKey(vapid.publicKey);
});
after(async () => {
  await push?.stop();
});
const of = (message_id: string, sub: TestSubscription): ReceivedPush[] =>
  push.for(sub).filter((r) => (r.document as { data: { message_id: string } }).data.message_id === message_id);
const kitWith = (): Promise<PushKit> => startPushKit({ web: new WebPushSender(vapid, { timeoutMs: 1500, caFile: push.caFile }) });

test('a device registered while the job waits for its retry does not get the older message', async () => {
  const kit = await kitWith();
  try {
    const carol = push.subscribe();
    await kit.register('carol', 'web', carol.json.endpoint, carol.json.keys);
    push.answer(carol, { status: 429, retryAfter: '1' });
    const m = await kit.send('before the new devices');
    await push.waitFor(() => of(m, carol).length === 1, 10_000, 'the first attempt');

    // During the wait: carol adds a second browser, frank registers his first one.
    const carolLater = push.subscribe();
    const frank = push.subscribe();
    await kit.register('carol', 'web', carolLater.json.endpoint, carolLater.json.keys);
    await kit.register('frank', 'web', frank.json.endpoint, frank.json.keys);

    await push.waitFor(() => of(m, carol).some((r) => r.status === 201), 10_000, 'the retry');
    // They are fine devices: the next message reaches all three. Waiting for it also lets the
    // retry's other deliveries, sent together with carol's, land before the check below.
    const next = await kit.send('after');
    await push.waitFor(() => [carol, carolLater, frank].every((s) => of(next, s).some((r) => r.status === 201)), 10_000, 'the next message');
    assert.deepEqual(of(m, carolLater), [], 'registered after the send');
    assert.deepEqual(of(m, frank), [], 'registered after the send');
    assert.deepEqual(kit.givenUp, []);
  } finally {
    await kit.close();
  }
});

test('a late first attempt skips devices registered after the send, whether the job carries the send time or not', async () => {
  const kit = await kitWith();
  // The kit's worker takes no job: the attempts below, by a worker of their own, come late.
  await kit.worker.close();
  const late = new PushWorker({
    bus: kit.bus, store: kit.store, presence: kit.presence, senders: { web: new WebPushSender(vapid, { timeoutMs: 1500, caFile: push.caFile }) }, concurrency: 1,
    log: { warn: () => undefined, debug: () => undefined },
  });
  try {
    const frank = push.subscribe();
    const dave = push.subscribe();
    await kit.register('dave', 'web', dave.json.endpoint, dave.json.keys);
    const ref = { tenant_id: TENANT, application_id: APP, conversation_id: kit.conversation_id };
    const m1 = await kit.send('one');
    const m2 = await kit.send('two');
    await kit.register('frank', 'web', frank.json.endpoint, frank.json.keys);
    // m1 as the actor enqueues it (candidates and send time known: no message read before the
    // devices); m2 as a job of an older node (the worker reads the send time from the message).
    const sent_at = (await kit.store.messages.get(ref, m1, null))?.created_at;
    await late.handle({ ...ref, message_id: m1, candidates: ['frank', 'dave'], ...(sent_at ? { sent_at } : {}) });
    await late.handle({ ...ref, message_id: m2 });
    for (const m of [m1, m2]) {
      assert.equal(of(m, dave).filter((r) => r.status === 201).length, 1, `dave gets ${m}`);
      assert.deepEqual(of(m, frank), [], `frank registered after ${m} was sent`);
    }
  } finally {
    await late.close();
    await kit.close();
  }
});
