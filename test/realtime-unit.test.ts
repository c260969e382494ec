/** Realtime building blocks without a node: credential signing, composite ids, the hub's shared subscriptions. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { createBus, MAX_FAN_SHARDS } from '../src/bus/index.ts';
import type { ChatBus, ChatEventBody } from '../src/actors/events.ts';
import { channelTag, encodePositions, frameOf, frameText, Hub, parseEventId, RealtimeCredentials, type Frame, type HubStream } from '../src/realtime/index.ts';
import { MAX_GRANT_CHANNELS } from '../src/realtime/credential.ts';
import { MAX_ENTRY_LENGTH, MAX_EVENT_ID_LENGTH } from '../src/realtime/event-id.ts';

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
  assert.match(frameText(got[0]![0]!), /^event: typing\ndata: \{"id":"[^"]+","type":"typing"/);
  hub.join({ deliver: () => undefined, keepAlive: () => undefined, end: () => undefined }, [ch]);
  assert.equal(await hub.position(ch), id, 'a joining stream learns the channel position: the last event seen');
  for (const [i, s] of streams.entries()) hub.leave(s, [ch, `user:acme:${i}`]);
  assert.equal(subscriptions, 1, 'the channel stays subscribed for the fourth stream only');
  hub.close();
  assert.equal(subscriptions, 0);
  await bus.close();
});

test('credentials: at most MAX_GRANT_CHANNELS channels, so every composite id fits MAX_EVENT_ID_LENGTH', () => {
  const creds = new RealtimeCredentials(crypto.randomBytes(32));
  const many = { ...grant, channels: Array.from({ length: MAX_GRANT_CHANNELS + 1 }, (_, i) => `conversation:acme:support:${i}`) };
  assert.throws(() => creds.sign(many), RangeError);
  assert.ok(creds.verify(creds.sign({ ...many, channels: many.channels.slice(1) })).ok);
  const longest = `${'9'.repeat(20)}-${'9'.repeat(15)}-${'9'.repeat(15)}`;
  const positions = new Map(many.channels.slice(1).map((c) => [channelTag(c), encodeURIComponent(longest)] as const));
  const id = encodePositions(positions);
  assert.ok(id.length <= MAX_GRANT_CHANNELS * MAX_ENTRY_LENGTH && id.length <= MAX_EVENT_ID_LENGTH, `${id.length} characters`);
  assert.equal(parseEventId(id)!.size, positions.size);
  // The user's own channel on the Redis fan log: a position per shard, MAX_FAN_SHARDS of them.
  const fanned = new Map(positions);
  fanned.delete(channelTag(many.channels[1]!));
  fanned.set(channelTag('user:acme:bob'), encodeURIComponent(Array.from({ length: MAX_FAN_SHARDS }, () => longest).join('.')));
  const withFan = encodePositions(fanned);
  assert.ok(withFan.length <= MAX_EVENT_ID_LENGTH, `${withFan.length} characters with a fanned channel`);
  assert.equal(parseEventId(withFan)!.size, fanned.size);
});

test('hub: position is the last id seen, else the bus head asked once for all streams joining; leaveChannel drops one channel', async () => {
  const bus = createBus({ driver: 'local' }) as ChatBus;
  let heads = 0;
  const head = bus.head.bind(bus);
  bus.head = (channel) => {
    heads++;
    return head(channel);
  };
  const hub = new Hub(bus, { keepAliveMs: 60_000 });
  const ch = 'conversation:acme:support:silent';
  const got: Frame[] = [];
  const a: HubStream = { deliver: (f) => got.push(f), keepAlive: () => undefined, end: () => undefined };
  const b: HubStream = { deliver: () => undefined, keepAlive: () => undefined, end: () => undefined };
  hub.join(a, [ch]);
  hub.join(b, [ch]);
  const [pa, pb] = await Promise.all([hub.position(ch), hub.position(ch)]);
  assert.equal(heads, 1, 'one head request for the channel');
  assert.equal(pa, pb);
  assert.match(pa, /^\d+-0$/, 'an empty epoch');
  assert.equal(await hub.position(ch), pa, 'remembered');
  const event = { type: 'typing', tenant_id: 'acme', application_id: 'support', conversation_id: 'silent', occurred_at: new Date().toISOString(), data: { user_id: 'bob' } } as ChatEventBody;
  const id = await bus.publish(ch, event);
  assert.equal(await hub.position(ch), id);
  assert.equal(got[0]!.type, 'typing');
  assert.equal(got[0]!.subject, null);
  hub.leaveChannel(a, ch);
  await bus.publish(ch, event);
  assert.equal(got.length, 1, 'nothing after leaving the channel');
  assert.equal(hub.channelCount, 1, 'still subscribed for b');
  hub.leaveChannel(b, ch);
  assert.equal(hub.channelCount, 0);
  assert.equal(hub.size, 2, 'both streams stay open');
  hub.close();
  const replay = await bus.readSince(ch, pa);
  assert.ok(!replay.reset && replay.events.length === 2, 'the empty-epoch head resumes both events');
  await bus.close();
});

test('hub: an event published to several channels is serialized once: every frame shares its tail, and reads as the envelope', async () => {
  const bus = createBus({ driver: 'local' }) as ChatBus;
  const hub = new Hub(bus, { keepAliveMs: 60_000 });
  const channels = ['user:acme:a', 'user:acme:b', 'user:acme:c'];
  const got: Frame[] = [];
  for (const ch of channels) hub.join({ deliver: (f) => got.push(f), keepAlive: () => undefined, end: () => undefined }, [ch]);
  const stringify = JSON.stringify;
  let serialized = 0;
  JSON.stringify = ((...args: Parameters<typeof stringify>) => {
    if (typeof args[0] === 'object') serialized++;
    return stringify(...args);
  }) as typeof JSON.stringify;
  const event = { type: 'message.created', tenant_id: 'acme', application_id: 'support', conversation_id: 'g1', seq: 7, occurred_at: new Date().toISOString(), data: { message: { body: 'héllo "team" \u2028' } } } as unknown as ChatEventBody;
  let ids: string[];
  try {
    ids = await bus.publishMany(channels, event);
  } finally {
    JSON.stringify = stringify;
  }
  assert.equal(serialized, 1, 'one JSON.stringify for the event, whatever the number of channels');
  assert.equal(got.length, 3);
  assert.ok(got.every((f) => f.tail === got[0]!.tail), 'one tail Buffer for every channel');
  for (const [i, f] of got.entries()) {
    assert.equal(f.id, ids[i]);
    assert.equal(frameText(f), `event: message.created\ndata: ${stringify({ id: ids[i], ...event })}\n\n`, 'byte for byte the envelope');
  }
  // A replayed entry (no json at hand) frames the same.
  assert.equal(frameText(frameOf(got[1]!.tag, { id: ids[1]!, channel: channels[1]!, event })), frameText(got[1]!));
  hub.close();
  await bus.close();
});
