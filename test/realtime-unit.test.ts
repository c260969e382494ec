/** Realtime building blocks without a node: credential signing, composite ids, the hub's shared subscriptions. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { createBus } from '../src/bus/index.ts';
import type { ChatBus, ChatEventBody } from '../src/actors/events.ts';
import { channelTag, encodePositions, Hub, parseEventId, RealtimeCredentials, type Frame, type HubStream } from '../src/realtime/index.ts';

const grant = { tenant_id: 'acme', application_id: 'support', user_id: 'bob', channels: ['user:acme:bob', 'conversation:acme:support:c1'], expires: Date.now() + 60_000 };

test('credentials: a signed grant verifies; tampered, foreign-key, expired and garbage ones do not', () => {
  const creds = new RealtimeCredentials(crypto.randomBytes(32));
  const c = creds.sign(grant);
  assert.deepEqual(creds.verify(c), { ok: true, grant });
  const [payload, mac] = c.split('.') as [string, string];
  const body = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { c: string[] };
  body.c.push('user:acme:carol');
  assert.deepEqual(creds.verify(`${Buffer.from(JSON.stringify(body)).toString('base64url')}.${mac}`), { ok: false, reason: 'forged' });
  assert.deepEqual(new RealtimeCredentials(crypto.randomBytes(32)).verify(c), { ok: false, reason: 'forged' });
  assert.deepEqual(creds.verify(c, grant.expires), { ok: false, reason: 'expired' });
  assert.deepEqual(creds.verify('nonsense'), { ok: false, reason: 'malformed' });
  assert.throws(() => new RealtimeCredentials(Buffer.alloc(16)), RangeError);
});

test('composite ids: round trip, percent-encoding, refusal of foreign values', () => {
  const a = channelTag('user:acme:bob');
  const b = channelTag('conversation:acme:support:c1');
  assert.equal(a.length, 8);
  assert.notEqual(a, b);
  const id = encodePositions(new Map([[a, encodeURIComponent('17-3')], [b, encodeURIComponent('odd,id:1')]]));
  assert.deepEqual([...parseEventId(id)!], [[a, '17-3'], [b, 'odd,id:1']]);
  assert.deepEqual([...parseEventId('')!], []);
  assert.equal(parseEventId('not-an-id'), null);
  assert.equal(parseEventId('x'.repeat(20_000)), null);
});

test('hub: one bus subscription per channel, shared; unsubscribed with the last stream; frames built once', async () => {
  const bus = createBus({ driver: 'local' }) as ChatBus;
  let subscriptions = 0;
  const subscribe = bus.subscribe.bind(bus);
  bus.subscribe = (channel, listener) => {
    subscriptions++;
    const off = subscribe(channel, listener);
    return () => {
      subscriptions--;
      off();
    };
  };
  const hub = new Hub(bus, { keepAliveMs: 60_000 });
  const got: Frame[][] = [[], [], []];
  const streams: HubStream[] = got.map((g) => ({ deliver: (f) => g.push(f), keepAlive: () => undefined, end: () => undefined }));
  const ch = 'conversation:acme:support:c1';
  for (const s of streams) hub.join(s, [ch, `user:acme:${streams.indexOf(s)}`]);
  assert.equal(subscriptions, 4);
  const event = { type: 'typing', tenant_id: 'acme', application_id: 'support', conversation_id: 'c1', occurred_at: new Date().toISOString(), data: { user_id: 'bob' } } as ChatEventBody;
  const id = await bus.publish(ch, event);
  assert.equal(got[0]![0]!.id, id);
  assert.ok(got[0]![0] === got[1]![0] && got[1]![0] === got[2]![0], 'the same frame object for every stream');
  assert.match(got[0]![0]!.body.toString(), /^event: typing\ndata: \{"id":"[^"]+","type":"typing"/);
  const heads = hub.join({ deliver: () => undefined, keepAlive: () => undefined, end: () => undefined }, [ch]);
  assert.equal(heads.get(ch), id, 'a joining stream learns the channel head');
  for (const [i, s] of streams.entries()) hub.leave(s, [ch, `user:acme:${i}`]);
  assert.equal(subscriptions, 1, 'the channel stays subscribed for the fourth stream only');
  hub.close();
  assert.equal(subscriptions, 0);
  await bus.close();
});
