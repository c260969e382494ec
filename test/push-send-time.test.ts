/**
 * The devices a message pushes to are those registered by the time it was sent: a device
 * registered while the job waits for a retry (or before a late first attempt) never receives
 * that older message, on the job's first attempt or any retry. Real PushWorker, SQLite store,
 * in-process bus, web push to a stand-in push service.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PushWorker } from '../src/push/push-worker.ts';
import { APP, TENANT, startPushKit, type PushKit } from './helpers/push-kit.ts';
import { useStandInPush } from './helpers/push-service.ts';

const stand = useStandInPush();
const { of } = stand;
const kitWith = (): Promise<PushKit> => startPushKit({ web: stand.sender() });

test('a device registered while the job waits for its retry does not get the older message', async () => {
  const kit = await kitWith();
  try {
    const carol = stand.push.subscribe();
    await kit.register('carol', 'web', carol.json.endpoint, carol.json.keys);
    stand.push.answer(carol, { status: 429, retryAfter: '1' });
    const m = await kit.send('before the new devices');
    await stand.push.waitFor(() => of(m, carol).length === 1, 10_000, 'the first attempt');

    // During the wait: carol adds a second browser, frank registers his first one.
    const carolLater = stand.push.subscribe();
    const frank = stand.push.subscribe();
    await kit.register('carol', 'web', carolLater.json.endpoint, carolLater.json.keys);
    await kit.register('frank', 'web', frank.json.endpoint, frank.json.keys);

    await stand.push.waitFor(() => of(m, carol).some((r) => r.status === 201), 10_000, 'the retry');
    // They are fine devices: the next message reaches all three. Waiting for it also lets the
    // retry's other deliveries, sent together with carol's, land before the check below.
    const next = await kit.send('after');
    await stand.push.waitFor(() => [carol, carolLater, frank].every((s) => of(next, s).some((r) => r.status === 201)), 10_000, 'the next message');
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
    bus: kit.bus, store: kit.store, presence: kit.presence, senders: { web: stand.sender() }, concurrency: 1,
    log: { warn: () => undefined, debug: () => undefined },
  });
  try {
    const frank = stand.push.subscribe();
    const dave = stand.push.subscribe();
    await kit.register('dave', 'web', dave.json.endpoint, dave.json.keys);
    const ref = { tenant_id: TENANT, application_id: APP, conversation_id: kit.conversation_id };
    const m1 = await kit.send('one');
    const m2 = await kit.send('two');
    // Send times and registration times are milliseconds, and a device registered in the
    // millisecond of the send counts as registered by then: frank registers a tick later.
    const m2At = Date.parse((await kit.store.messages.get(ref, m2, null))?.created_at ?? '');
    while (Date.now() <= m2At) await new Promise((r) => setTimeout(r, 1));
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
