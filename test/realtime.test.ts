/** The realtime stream end to end with a real EventSource client: credential, fanout, resume, reset, refusals. */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';
import { conversationChannel, userChannel } from '../src/bus/index.ts';
import { channelTag, parseEventId } from '../src/realtime/index.ts';

let node: TestNode;
const tok: Record<string, string> = {};
const base = () => `${node.api}/tenants/acme/applications/support`;
const json = (token: string) => ({ ...bearer(token), 'Content-Type': 'application/json' });
const post = (path: string, token: string, body: unknown): Promise<Res> =>
  request(`${base()}${path}`, { method: 'POST', headers: json(token), body: JSON.stringify(body) });
const tokenFor = (who: string, conversationId?: string): Promise<Res> =>
  request(`${base()}/notifications/realtime-token${conversationId === undefined ? '' : `?conversation_id=${conversationId}`}`, { headers: bearer(tok[who]!) });

const TYPES = ['ready', 'reset', 'expired', 'message.created', 'message.updated', 'message.deleted', 'reaction.added', 'reaction.removed', 'member.added', 'member.removed', 'conversation.created', 'conversation.updated', 'conversation.archived', 'conversation.unarchived', 'conversation.deleted', 'read.updated', 'typing'];

interface Got {
  type: string;
  id: string;
  data: Record<string, unknown>;
}

/** An EventSource that records every event; `lastEventId` is sent as the header when given. */
class Client {
  readonly events: Got[] = [];
  readonly es: EventSource;
  errors = 0;
  private waiters: Array<() => void> = [];

  constructor(url: string, lastEventId?: string) {
    this.es = new EventSource(url, {
      fetch: (input, init) => fetch(input, lastEventId === undefined ? init : { ...init, headers: { ...init.headers, 'Last-Event-ID': lastEventId } }),
    });
    for (const t of TYPES) {
      this.es.addEventListener(t, (e) => {
        this.events.push({ type: t, id: e.lastEventId, data: JSON.parse(e.data) as Record<string, unknown> });
        this.wake();
      });
    }
    this.es.onerror = () => {
      this.errors++;
      this.wake();
    };
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  async until<T>(check: () => T | undefined | false, what: string, ms = 3000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = check();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.events.map((e) => e.type))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  event(type: string, pred: (g: Got) => boolean = () => true, ms?: number): Promise<Got> {
    return this.until(() => this.events.find((e) => e.type === type && pred(e)), type, ms);
  }

  about(conversationId: string): Got[] {
    return this.events.filter((e) => e.data.conversation_id === conversationId);
  }

  close(): void {
    this.es.close();
  }
}

const clients: Client[] = [];
async function streamOf(who: string, conversationId?: string, lastEventId?: string): Promise<Client> {
  const res = await tokenFor(who, conversationId);
  assert.equal(res.status, 200, res.text);
  const c = new Client(res.json().stream_url as string, lastEventId);
  clients.push(c);
  await c.event('ready');
  return c;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The unlabelled chat_realtime_* samples on the node's metrics port. */
async function streamMetrics(): Promise<Record<string, number>> {
  const text = (await request(`http://127.0.0.1:${node.metricsPort}/metrics`)).text;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^chat_realtime_(\w+) (\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}
const messageOf = (g: Got) => (g.data.data as { message: { message_id: string; body: string } }).message;

before(async () => {
  node = await startTestNode({ CHAT_RATE_SEND: '100000/10s', CHAT_BUS_WINDOW_EVENTS: '6', CHAT_REALTIME_KEEPALIVE_MS: '200', CHAT_REALTIME_MAX_BUFFERED_BYTES: '65536' });
  for (const u of ['bob', 'carol', 'frank', 'alice']) tok[u] = await userToken(node.idp, u);
  tok.machine = await machineToken(node.idp);
});
after(async () => {
  for (const c of clients) c.close();
  await node.stop();
});

describe('GET realtime-token', () => {
  test('users get stream_url on the public base URL, expires within the lifetime, their user_id', async () => {
    const t0 = Date.now();
    const res = await tokenFor('bob');
    assert.equal(res.status, 200, res.text);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['expires', 'stream_url', 'user_id']);
    assert.equal(body.user_id, 'bob');
    assert.ok((body.stream_url as string).startsWith(`${node.api}/realtime/stream?credential=`), body.stream_url);
    assert.equal(typeof body.expires, 'number');
    assert.ok(body.expires > t0 && body.expires <= Date.now() + 5 * 60_000, String(body.expires));
  });

  test('machines are refused with principal_not_allowed', async () => {
    assertErrorBody(await request(`${base()}/notifications/realtime-token`, { headers: bearer(tok.machine!) }), 403, 'principal_not_allowed');
  });

  test('conversation_id must be a PUBLIC channel of this context, else not_found; unknown query fields are invalid_request', async () => {
    assertErrorBody(await tokenFor('bob', '00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    const group = (await post('/conversations', tok.bob!, { type: 'GROUP', name: 'g', member_user_ids: ['carol'] })).json().conversation_id as string;
    assertErrorBody(await tokenFor('bob', group), 404, 'not_found');
    const channel = (await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'viewable' })).json().conversation_id as string;
    assert.equal((await tokenFor('bob', channel)).status, 200);
    assertErrorBody(await request(`${base()}/notifications/realtime-token?foo=1`, { headers: bearer(tok.bob!) }), 400, 'invalid_request');
  });
});

describe('the stream', () => {
  test('refuses a missing, forged or tampered credential with the error body (401 invalid_token)', async () => {
    const url = (await tokenFor('bob')).json().stream_url as string;
    const path = '/api/v1/realtime/stream';
    assertErrorBody(await request(`${node.api}/realtime/stream`), 401, 'invalid_token', path);
    const cred = new URL(url).searchParams.get('credential')!;
    const [payload, mac] = cred.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { c: string[] };
    claims.c.push('user:acme:carol'); // widen the grant: the MAC no longer matches
    const widened = `${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`;
    assertErrorBody(await request(`${node.api}/realtime/stream?credential=${widened}`), 401, 'invalid_token', path);
    assertErrorBody(await request(`${node.api}/realtime/stream?credential=${payload}.AAAAAAAAAAAAAAAAAAAAAA`), 401, 'invalid_token', path);
    assertErrorBody(await request(`${node.api}/realtime/stream?credential=garbage`), 401, 'invalid_token', path);
  });

  test('answers text/event-stream with keep-alive comments', async () => {
    const url = (await tokenFor('bob')).json().stream_url as string;
    const text = await new Promise<{ type: string; body: string }>((resolve, reject) => {
      const req = http.get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
          if (body.includes(': ka\n\n')) {
            req.destroy();
            resolve({ type: String(res.headers['content-type']), body });
          }
        });
      });
      req.on('error', reject);
      setTimeout(() => reject(new Error('no keep-alive within 2 s')), 2000);
    });
    assert.match(text.type, /^text\/event-stream/);
    assert.match(text.body, /event: ready\n/);
  });

  test('DIRECT/GROUP events reach the members’ own channels, nobody else', async () => {
    const [bob, carol, frank, alice] = await Promise.all(['bob', 'carol', 'frank', 'alice'].map((u) => streamOf(u)));
    const res = await post('/conversations', tok.bob!, { type: 'GROUP', name: 'Pair', member_user_ids: ['carol'] });
    assert.equal(res.status, 201, res.text);
    const id = res.json().conversation_id as string;
    await bob!.event('conversation.created', (g) => g.data.conversation_id === id);
    await carol!.event('conversation.created', (g) => g.data.conversation_id === id);
    const sent = await post(`/conversations/${id}/messages`, tok.carol!, { body: 'hello group' });
    assert.equal(sent.status, 201, sent.text);
    for (const c of [bob!, carol!]) {
      const got = await c.event('message.created', (g) => g.data.conversation_id === id);
      assert.equal(messageOf(got).body, 'hello group');
      assert.equal(got.data.id, got.id.split(',').map((p) => decodeURIComponent(p.slice(9))).find((x) => x === got.data.id), 'the composite id carries the event’s bus id');
    }
    const added = await post(`/conversations/${id}/members`, tok.bob!, { user_id: 'frank' });
    assert.equal(added.status, 201, added.text);
    await frank!.event('member.added', (g) => g.data.conversation_id === id);
    await bob!.event('member.added', (g) => g.data.conversation_id === id);
    await sleep(200);
    assert.deepEqual(alice!.about(id), [], 'a non-member gets nothing');
    assert.deepEqual(frank!.about(id).map((e) => e.type), ['member.added'], 'frank sees nothing from before he joined');
  });

  test('CHANNEL events arrive through the conversation channel; members added learn on their own channel; viewers of a PUBLIC channel see it', async () => {
    const res = await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'news' });
    assert.equal(res.status, 201, res.text);
    const ch = res.json().conversation_id as string;
    const frankOld = await streamOf('frank');
    assert.equal((await post(`/conversations/${ch}/members`, tok.carol!, { user_id: 'frank' })).status, 201);
    const added = await frankOld.event('member.added', (g) => g.data.conversation_id === ch);
    assert.equal((added.data.data as { member: { user_id: string } }).member.user_id, 'frank');
    // With fresh credentials the members follow the channel; alice views it; bob does neither.
    const [carol, frank, alice, bob] = await Promise.all([streamOf('carol'), streamOf('frank'), streamOf('alice', ch), streamOf('bob')]);
    assert.equal((await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'breaking' })).status, 201);
    for (const c of [carol!, frank!, alice!]) assert.equal(messageOf(await c.event('message.created', (g) => g.data.conversation_id === ch)).body, 'breaking');
    await sleep(200);
    assert.deepEqual(bob!.about(ch), [], 'not a member, not viewing: nothing');
    assert.equal(frankOld.about(ch).filter((e) => e.type === 'message.created').length, 0, 'an old credential does not cover a channel joined later');
    assert.equal(frank!.about(ch).filter((e) => e.type === 'message.created').length, 1, 'delivered once');
  });

  test('resume with Last-Event-ID (header or query) replays what was missed, in order, before live events', async () => {
    const id = (await post('/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: ['frank'] })).json().conversation_id as string;
    const first = await streamOf('frank');
    await post(`/conversations/${id}/messages`, tok.bob!, { body: 'm1' });
    const m1 = await first.event('message.created', (g) => g.data.conversation_id === id);
    first.close();
    for (const body of ['m2', 'm3', 'm4']) assert.equal((await post(`/conversations/${id}/messages`, tok.bob!, { body })).status, 201);

    const resumed = await streamOf('frank', undefined, m1.id);
    const ready = resumed.events.find((e) => e.type === 'ready')!;
    assert.equal(ready.data.resumed, true);
    await resumed.until(() => resumed.about(id).length >= 3, 'replay');
    await post(`/conversations/${id}/messages`, tok.bob!, { body: 'm5' });
    await resumed.until(() => resumed.about(id).length >= 4, 'live event');
    assert.deepEqual(resumed.about(id).map((e) => messageOf(e).body), ['m2', 'm3', 'm4', 'm5']);

    // The same with the query parameter, for clients that cannot set headers.
    const url = (await tokenFor('frank')).json().stream_url as string;
    const q = new Client(`${url}&last_event_id=${encodeURIComponent(m1.id)}`);
    clients.push(q);
    await q.until(() => q.about(id).length >= 4, 'replay via query');
    assert.deepEqual(q.about(id).map((e) => messageOf(e).body), ['m2', 'm3', 'm4', 'm5']);
    q.close();
  });

  test('one Last-Event-ID resumes several channels at once (own channel + CHANNEL), also under a fresh credential', async () => {
    const ch = (await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'multi' })).json().conversation_id as string;
    assert.equal((await post(`/conversations/${ch}/members`, tok.carol!, { user_id: 'bob' })).status, 201);
    const dm = (await post('/conversations', tok.carol!, { type: 'DIRECT', member_user_ids: ['bob'] })).json().conversation_id as string;
    const first = await streamOf('bob');
    await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'c1' });
    await post(`/conversations/${dm}/messages`, tok.carol!, { body: 'd1' });
    await first.event('message.created', (g) => g.data.conversation_id === dm);
    await first.event('message.created', (g) => g.data.conversation_id === ch);
    const last = first.events[first.events.length - 1]!;
    assert.equal(last.id.split(',').length >= 2, true, `composite id covers both channels: ${last.id}`);
    first.close();
    await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'c2' });
    await post(`/conversations/${dm}/messages`, tok.carol!, { body: 'd2' });
    await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'c3' });
    const resumed = await streamOf('bob', undefined, last.id); // a fresh credential, same channels
    await resumed.until(() => resumed.about(ch).length >= 2 && resumed.about(dm).length >= 1, 'replay of both channels');
    assert.deepEqual(resumed.about(ch).map((e) => messageOf(e).body), ['c2', 'c3']);
    assert.deepEqual(resumed.about(dm).map((e) => messageOf(e).body), ['d2']);
  });

  test('beyond the resume window (or an id the service never wrote) the client gets `reset`', async () => {
    const id = (await post('/conversations', tok.alice!, { type: 'DIRECT', member_user_ids: ['carol'] })).json().conversation_id as string;
    const first = await streamOf('alice');
    await post(`/conversations/${id}/messages`, tok.carol!, { body: 'x0' });
    const last = await first.event('message.created', (g) => g.data.conversation_id === id);
    first.close();
    for (let i = 1; i <= 8; i++) assert.equal((await post(`/conversations/${id}/messages`, tok.carol!, { body: `x${i}` })).status, 201);
    const resumed = await streamOf('alice', undefined, last.id);
    const reset = await resumed.event('reset');
    assert.equal(reset.data.reason, 'beyond_window');
    assert.deepEqual(resumed.about(id), [], 'nothing replayed after a reset');
    await post(`/conversations/${id}/messages`, tok.carol!, { body: 'after' });
    assert.equal(messageOf(await resumed.event('message.created', (g) => g.data.conversation_id === id)).body, 'after');

    const junk = await streamOf('alice', undefined, 'not-an-id');
    await junk.event('reset');
  });

  test('a consumer that stops reading is cut off once its unsent output passes the bound', async () => {
    const cutBefore = (await streamMetrics()).slow_consumers_total;
    assert.equal(typeof cutBefore, 'number', 'chat_realtime_slow_consumers_total is exported');
    const id = (await post('/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: ['alice'] })).json().conversation_id as string;
    const url = new URL((await tokenFor('alice')).json().stream_url as string);
    const sock = net.connect(Number(url.port), url.hostname);
    await new Promise((r) => sock.once('connect', r));
    sock.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`);
    let ended = false;
    sock.on('end', () => (ended = true));
    sock.on('close', () => (ended = true));
    sock.on('error', () => (ended = true));
    await new Promise((r) => setTimeout(r, 100));
    sock.pause(); // a client that no longer reads
    const text = 'z'.repeat(9000);
    let sent = 0;
    const started = Date.now();
    while (sent < 2500 && Date.now() - started < 20_000) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => post(`/conversations/${id}/messages`, tok.bob!, { body: text })));
      for (const r of batch) assert.equal(r.status, 201, r.text);
      sent += batch.length;
      if (ended) break; // reset by the server
    }
    // What the kernel buffers (tens of MB at most on loopback) is read now; a cut stream then ends.
    sock.resume();
    const deadline = Date.now() + 3000;
    while (!ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    sock.destroy();
    assert.ok(ended, `the server kept a stream that does not read open after ${sent} events of ~9 kB`);
    assert.equal((await streamMetrics()).slow_consumers_total, cutBefore! + 1, 'the cut-off is counted once');
  });
});

describe('stream metrics', () => {
  test('the metrics port shows streams open, opened and closed, and events written, without labels', async () => {
    const ch = (await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'metered' })).json().conversation_id as string;
    const m0 = await streamMetrics();
    for (const name of ['streams_open', 'channels', 'streams_opened_total', 'streams_closed_total', 'slow_consumers_total', 'events_written_total']) {
      assert.equal(typeof m0[name], 'number', `chat_realtime_${name} is exported, unlabelled`);
    }
    assert.equal(m0.streams_opened_total! - m0.streams_closed_total!, m0.streams_open, 'open = opened - closed');

    const [a, b] = await Promise.all([streamOf('carol'), streamOf('carol')]);
    const m1 = await streamMetrics();
    assert.equal(m1.streams_open, m0.streams_open! + 2);
    assert.equal(m1.streams_opened_total, m0.streams_opened_total! + 2);

    assert.equal((await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'counted' })).status, 201);
    await Promise.all([a!, b!].map((c) => c.event('message.created', (g) => g.data.conversation_id === ch)));
    assert.equal((await streamMetrics()).events_written_total, m1.events_written_total! + 2, 'one event written to each of the two streams');

    a!.close();
    const deadline = Date.now() + 3000;
    let m2 = await streamMetrics();
    while (m2.streams_closed_total! < m1.streams_closed_total! + 1 && Date.now() < deadline) {
      await sleep(50);
      m2 = await streamMetrics();
    }
    assert.equal(m2.streams_closed_total, m1.streams_closed_total! + 1, 'the stream the client closed is counted closed');
    assert.equal(m2.streams_open, m1.streams_open! - 1);
  });
});

describe('positions of silent channels, and channels the user loses while the stream runs', () => {
  const tagOf = (ch: string): string => channelTag(conversationChannel('acme', 'support', ch));
  const ownTag = (user: string): string => channelTag(userChannel('acme', user));
  const entries = (id: string): Map<string, string> => parseEventId(id)!;

  test('a channel silent for the whole connection is resumed: what was published on it meanwhile is replayed, not reset, not missed', async () => {
    const ch = (await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'quiet' })).json().conversation_id as string;
    assert.equal((await post(`/conversations/${ch}/members`, tok.carol!, { user_id: 'bob' })).status, 201);
    const first = await streamOf('bob');
    const ready = first.events.find((e) => e.type === 'ready')!;
    assert.ok(entries(ready.id).has(tagOf(ch)), `the first ready id already carries the silent channel: ${ready.id}`);
    assert.ok(entries(ready.id).has(ownTag('bob')), 'and the own channel');
    await sleep(100);
    assert.deepEqual(first.about(ch), [], 'nothing on the channel during the connection');
    const lastId = first.events[first.events.length - 1]!.id;
    first.close();
    assert.equal((await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'while away' })).status, 201);
    const resumed = await streamOf('bob', undefined, lastId);
    assert.equal(resumed.events.find((e) => e.type === 'ready')!.data.resumed, true);
    const got = await resumed.event('message.created', (g) => g.data.conversation_id === ch);
    assert.equal(messageOf(got).body, 'while away');
    assert.deepEqual(resumed.events.filter((e) => e.type === 'reset'), [], 'no reset');
  });

  test("the user's own channel, silent for the whole connection, is resumed too", async () => {
    const first = await streamOf('alice');
    const lastId = first.events[first.events.length - 1]!.id;
    first.close();
    const created = await post('/conversations', tok.bob!, { type: 'GROUP', name: 'while away', member_user_ids: ['alice'] });
    assert.equal(created.status, 201, created.text);
    const g = created.json().conversation_id as string;
    assert.equal((await post(`/conversations/${g}/messages`, tok.bob!, { body: 'did you see this?' })).status, 201);
    const resumed = await streamOf('alice', undefined, lastId);
    await resumed.until(() => resumed.about(g).length >= 2, 'replay on the own channel');
    assert.deepEqual(resumed.about(g).map((e) => e.type), ['conversation.created', 'message.created']);
    assert.deepEqual(resumed.events.filter((e) => e.type === 'reset'), []);
  });

  test('a member removed from a CHANNEL gets member.removed and nothing from the channel after it; other members still do; a reconnect with the stale credential does not follow it again', async () => {
    const ch = (await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'moderated' })).json().conversation_id as string;
    for (const u of ['bob', 'frank']) assert.equal((await post(`/conversations/${ch}/members`, tok.carol!, { user_id: u })).status, 201);
    const dm = (await post('/conversations', tok.carol!, { type: 'DIRECT', member_user_ids: ['bob'] })).json().conversation_id as string;
    const bobUrl = (await tokenFor('bob')).json().stream_url as string;
    const bob = new Client(bobUrl);
    clients.push(bob);
    await bob.event('ready');
    const frank = await streamOf('frank');
    assert.equal((await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'before' })).status, 201);
    await bob.event('message.created', (g) => g.data.conversation_id === ch);

    const removed = await request(`${base()}/conversations/${ch}/members/bob`, { method: 'DELETE', headers: bearer(tok.carol!) });
    assert.equal(removed.status, 204, removed.text);
    const notice = await bob.event('member.removed', (g) => g.data.conversation_id === ch);
    assert.equal((notice.data.data as { member: { user_id: string } }).member.user_id, 'bob');
    assert.equal(entries(notice.id).get(tagOf(ch))!.startsWith('~'), true, `the id marks the channel dropped: ${notice.id}`);

    assert.equal((await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'after' })).status, 201);
    assert.equal(messageOf(await frank.event('message.created', (g) => g.data.conversation_id === ch && messageOf(g).body === 'after')).body, 'after');
    // Published after, on bob's own channel: once it arrived, 'after' would have too.
    assert.equal((await post(`/conversations/${dm}/messages`, tok.carol!, { body: 'sentinel' })).status, 201);
    await bob.event('message.created', (g) => g.data.conversation_id === dm);
    assert.deepEqual(bob.about(ch).filter((e) => e.type === 'message.created').map((e) => messageOf(e).body), ['before'], 'nothing after the removal');
    const lastId = bob.events[bob.events.length - 1]!.id;
    bob.close();

    // What an EventSource does on a network error: the same URL, its last id.
    assert.equal((await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'while reconnecting' })).status, 201);
    const again = new Client(bobUrl, lastId);
    clients.push(again);
    await again.event('ready');
    assert.equal((await post(`/conversations/${ch}/messages`, tok.carol!, { body: 'later' })).status, 201);
    assert.equal((await post(`/conversations/${dm}/messages`, tok.carol!, { body: 'sentinel 2' })).status, 201);
    await again.event('message.created', (g) => g.data.conversation_id === dm && messageOf(g).body === 'sentinel 2');
    assert.deepEqual(again.about(ch), [], 'neither replayed nor live');
    assert.ok(entries(again.events[again.events.length - 1]!.id).get(tagOf(ch))!.startsWith('~'), 'still marked dropped');
  });

  test('a member who leaves, and the members of a deleted CHANNEL, stop following it at that event', async () => {
    const ch = (await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'short-lived' })).json().conversation_id as string;
    for (const u of ['bob', 'frank']) assert.equal((await post(`/conversations/${ch}/members`, tok.carol!, { user_id: u })).status, 201);
    const bobUrl = (await tokenFor('bob')).json().stream_url as string;
    const [bob, frank] = await Promise.all([streamOf('bob'), streamOf('frank')]);
    assert.equal((await request(`${base()}/conversations/${ch}/members/frank`, { method: 'DELETE', headers: bearer(tok.frank!) })).status, 204);
    const left = await frank.event('member.removed', (g) => g.data.conversation_id === ch);
    assert.ok(entries(left.id).get(tagOf(ch))!.startsWith('~'), 'the one who left dropped the channel');
    await bob.event('member.removed', (g) => g.data.conversation_id === ch);
    assert.ok(!entries(bob.events[bob.events.length - 1]!.id).get(tagOf(ch))!.startsWith('~'), 'another member still follows it');
    assert.equal((await request(`${base()}/conversations/${ch}`, { method: 'DELETE', headers: bearer(tok.carol!) })).status, 204);
    const deleted = await bob.event('conversation.deleted', (g) => g.data.conversation_id === ch);
    assert.ok(entries(deleted.id).get(tagOf(ch))!.startsWith('~'), 'a deleted conversation is dropped');
    // member.removed comes on the channel and on frank's own channel; nothing else after leaving.
    assert.ok(frank.about(ch).length > 0 && frank.about(ch).every((e) => e.type === 'member.removed'), JSON.stringify(frank.about(ch).map((e) => e.type)));
    // A credential issued before the deletion, opened afresh (no Last-Event-ID): the check at
    // connect drops the deleted conversation from the first id on.
    const late = new Client(bobUrl);
    clients.push(late);
    const ready = await late.event('ready');
    assert.ok(entries(ready.id).get(tagOf(ch))!.startsWith('~'), `dropped at connect: ${ready.id}`);
  });
});
