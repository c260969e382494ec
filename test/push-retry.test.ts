/**
 * Retry-After: parsing (delay seconds and HTTP dates), the push retry policy, and web push
 * through the real PushWorker honouring a 429's Retry-After, also when the bus runs the default
 * backoff (the worker then hands early retries back without calling the push service).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultRetry } from '../src/bus/index.ts';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, pushRetryPolicy } from '../src/push/retry.ts';
import { RetryablePushError } from '../src/push/sender.ts';
import { startPushKit, type PushKit } from './helpers/push-kit.ts';
import { useStandInPush } from './helpers/push-service.ts';

test('Retry-After: delay seconds, an HTTP date from now, nothing else', () => {
  const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
  assert.equal(parseRetryAfter('120', now), 120_000);
  assert.equal(parseRetryAfter('0', now), 0);
  assert.equal(parseRetryAfter([' 3 '], now), 3000);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:28:05 GMT', now), 5000);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:27:00 GMT', now), 0, 'a past date: now');
  for (const bad of [undefined, null, '', '-5', '1.5', 'soon', '12abc']) assert.equal(parseRetryAfter(bad, now), null, String(bad));
});

test('pushRetryPolicy: the default backoff, stretched to Retry-After, given up past the cap or the attempts', () => {
  const plain = new Error('x');
  for (let a = 1; a <= 5; a += 1) assert.equal(pushRetryPolicy(a, plain), defaultRetry(a, plain));
  assert.equal(pushRetryPolicy(1, new RetryablePushError('429', 429, null)), 200);
  assert.equal(pushRetryPolicy(1, new RetryablePushError('429', 429, 3000)), 3000);
  assert.equal(pushRetryPolicy(3, new RetryablePushError('429', 429, 100)), 800, 'never shorter than the backoff');
  assert.equal(pushRetryPolicy(1, new RetryablePushError('429', 429, MAX_RETRY_AFTER_MS)), MAX_RETRY_AFTER_MS);
  assert.equal(pushRetryPolicy(1, new RetryablePushError('429', 429, MAX_RETRY_AFTER_MS + 1)), null, 'longer than we keep a job');
  assert.equal(pushRetryPolicy(5, new RetryablePushError('429', 429, 1000)), null);
});

describe('web push honours Retry-After', () => {
  const stand = useStandInPush();
  const { of } = stand;

  async function scenario(kit: PushKit): Promise<void> {
    const carol = stand.push.subscribe();
    const frank = stand.push.subscribe();
    await kit.register('carol', 'web', carol.json.endpoint, carol.json.keys);
    await kit.register('frank', 'web', frank.json.endpoint, frank.json.keys);
    stand.push.answer(carol, { status: 429, retryAfter: '1' });
    const m = await kit.send('wait for it');
    await stand.push.waitFor(() => of(m, carol).some((r) => r.status === 201) && of(m, frank).length === 1);
    const tries = of(m, carol);
    assert.deepEqual(tries.map((r) => r.status), [429, 201]);
    const waited = (tries[1]?.at ?? 0) - (tries[0]?.at ?? 0);
    assert.ok(waited >= 1000, `retried after ${waited} ms`);
    assert.equal(of(m, frank).length, 1, 'a served device is not pushed twice');
    assert.deepEqual(stand.push.problems, []);
    assert.deepEqual(kit.givenUp, []);
  }

  test('with pushRetryPolicy on the bus', async () => {
    const kit = await startPushKit({ web: stand.sender() });
    try {
      await scenario(kit);
    } finally {
      await kit.close();
    }
  });

  test('with the default backoff on the bus: early attempts send nothing', async () => {
    const kit = await startPushKit({ web: stand.sender() }, defaultRetry);
    try {
      await scenario(kit);
    } finally {
      await kit.close();
    }
  });
});
