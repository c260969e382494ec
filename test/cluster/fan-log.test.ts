/**
 * Chat nodes with the bus's fan log (CHAT_REDIS_FAN_SHARDS=1; docs/bus.md "The fan log"): two node
 * processes on one Redis, the IdP, real EventSource clients. A user's own channel has no stream of
 * its own there: its position moves with everybody's messages in the shard, and the shard keeps
 * only the window. So a stream whose user gets nothing refreshes its id on the keep-alive tick
 * (`event: position`), and a client away for longer than the window, having received nothing
 * meanwhile, resumes on the other node without a `reset`; what it missed comes once, in order.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { bearer, request } from '../helpers/http.ts';
import { machineToken, userToken } from '../helpers/tokens.ts';

let cluster: TestCluster;
const tok: Record<string, string> = {};
const BASE = '/tenants/acme/applications/support';
const WINDOW_MS = 1500;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function group(members: string[]): Promise<string> {
  const res = await request(`${cluster.node(0).api}${BASE}/conversations`, {
    method: 'POST',
    headers: Object.assign(bearer(tok.machine!), { 'Content-Type': 'application/json' }),
    body: JSON.stringify({ type: 'GROUP', name: `g-${crypto.randomUUID().slice(0, 6)}`, member_user_ids: members }),
  });
  assert.equal(res.status, 201, res.text);
  return res.json().conversation_id as string;
}

async function send(i: number, conversationId: string, body: string): Promise<void> {
  const res = await request(`${cluster.node(i).api}${BASE}/conversations/${conversationId}/messages`, {
    method: 'POST',
    headers: Object.assign(bearer(tok.machine!), { 'Content-Type': 'application/json' }),
    body: JSON.stringify({ body, actor_user_id: 'alice' }),
  });
  assert.equal(res.status, 201, res.text);
}

interface Client {
  es: EventSource;
  bodies: string[];
  ids: string[];
  positions: number;
  resets: number;
  ready: { resumed: boolean } | null;
}

async function open(i: number, token: string, lastEventId?: string): Promise<Client> {
  const cred = await request(`${cluster.node(i).api}${BASE}/notifications/realtime-token`, { headers: bearer(token) });
  assert.equal(cred.status, 200, cred.text);
  const url = new URL(cred.json().stream_url as string);
  const query = lastEventId === undefined ? '' : `&last_event_id=${encodeURIComponent(lastEventId)}`;
  const es = new EventSource(`${cluster.node(i).origin}${url.pathname}${url.search}${query}`);
  const c: Client = { es, bodies: [], ids: [], positions: 0, resets: 0, ready: null };
  es.addEventListener('message.created', (e) => {
    c.bodies.push((JSON.parse(e.data) as { data: { message: { body: string } } }).data.message.body);
    c.ids.push(e.lastEventId);
  });
  es.addEventListener('position', (e) => {
    c.positions += 1;
    c.ids.push(e.lastEventId);
  });
  es.addEventListener('reset', () => (c.resets += 1));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('the stream did not open')), 10_000);
    es.addEventListener('ready', (e) => {
      clearTimeout(t);
      c.ready = JSON.parse(e.data) as { resumed: boolean };
      c.ids.push(e.lastEventId);
      resolve();
    });
  });
  return c;
}

before(async () => {
  cluster = await startCluster({
    nodes: 2,
    env: { CHAT_REDIS_FAN_SHARDS: '1', CHAT_REALTIME_KEEPALIVE_MS: '200', CHAT_BUS_WINDOW_MS: String(WINDOW_MS), CHAT_RATE_SEND: '100000/10s', CHAT_RATE_CLIENT: '1000000/60s' },
  });
  tok.machine = await machineToken(cluster.idp.url);
  tok.bob = await userToken(cluster.idp.url, 'bob');
});
after(async () => {
  await cluster?.stop();
});

describe('fan log: chat nodes', () => {
  test("a quiet user's id follows the fan log; away longer than the window, the client resumes on the other node with no reset, and gets what it missed once", { timeout: 60_000 }, async () => {
    const others = await group(['alice', 'carol']);
    const mine = await group(['alice', 'bob']);
    const bob = await open(0, tok.bob!);
    await send(1, mine, 'before');
    await sleep(300);
    // Messages bob is not in move the shard for longer than the window: his stream's id follows.
    for (let k = 0; k < 12; k += 1) {
      await send(k % 2, others, `other ${k}`);
      await sleep(200);
    }
    assert.ok(bob.positions > 0, 'position events on the keep-alive ticks');
    const last = bob.ids[bob.ids.length - 1]!;
    assert.notEqual(last, bob.ids[0], 'the id moved with the fan log');
    bob.es.close();
    await send(0, mine, 'while away 1');
    await send(1, mine, 'while away 2');
    // The id `ready` carried is older than the window now, with entries after it dropped: a
    // client still holding it would get a reset. The refreshed one resumes.
    const stale = await open(1, tok.bob!, bob.ids[0]!);
    stale.es.close();
    assert.equal(stale.resets, 1, 'the id of ready, older than the window: reset');
    const back = await open(1, tok.bob!, last);
    try {
      assert.equal(back.ready?.resumed, true);
      assert.equal(back.resets, 0);
      await send(0, mine, 'live');
      const deadline = Date.now() + 10_000;
      while (!back.bodies.includes('live') && Date.now() < deadline) await sleep(50);
      assert.deepEqual(back.bodies, ['while away 1', 'while away 2', 'live'], 'what bob missed, once, in order, then live');
      assert.deepEqual(bob.bodies, ['before']);
    } finally {
      back.es.close();
    }
  });
});
