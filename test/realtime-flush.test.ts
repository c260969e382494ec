/**
 * CHAT_REALTIME_FLUSH_MS: with a window, a stream's live frames of that window leave in one
 * write, in order, none lost (the default, frames of one turn of the event loop, is what the
 * other realtime tests run on).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

let node: TestNode;
const tok: Record<string, string> = {};
const base = () => `${node.api}/tenants/acme/applications/support`;
const post = (path: string, token: string, body: unknown): Promise<Res> =>
  request(`${base()}${path}`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

before(async () => {
  node = await startTestNode({ CHAT_REALTIME_FLUSH_MS: '300', CHAT_RATE_SEND: '100000/10s' });
  for (const u of ['bob', 'alice']) tok[u] = await userToken(node.idp, u);
});
after(() => node.stop());

describe('realtime flush window', () => {
  test("a stream's frames of one window leave in one write, in order, every one once", async () => {
    const id = (await post('/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: ['alice'] })).json().conversation_id as string;
    const streamUrl = new URL((await request(`${base()}/notifications/realtime-token`, { headers: bearer(tok.alice!) })).json().stream_url as string);
    const sock = net.connect(Number(streamUrl.port), streamUrl.hostname);
    const reads: string[] = [];
    sock.on('data', (d: Buffer) => reads.push(d.toString('utf8')));
    await new Promise((r) => sock.once('connect', r));
    sock.write(`GET ${streamUrl.pathname}${streamUrl.search} HTTP/1.1\r\nHost: ${streamUrl.host}\r\nAccept: text/event-stream\r\n\r\n`);
    try {
      const waitFor = async (pred: () => boolean, what: string): Promise<void> => {
        for (const deadline = Date.now() + 5000; !pred(); await new Promise((r) => setTimeout(r, 20))) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(reads)}`);
        }
      };
      await waitFor(() => reads.join('').includes('event: ready'), 'ready');
      const before = reads.length;
      const bodies = ['flush-one', 'flush-two', 'flush-three'];
      // Sent one after the other, each acknowledged, all well inside one 300 ms window.
      for (const body of bodies) assert.equal((await post(`/conversations/${id}/messages`, tok.bob!, { body })).status, 201);
      await waitFor(() => reads.slice(before).join('').includes('flush-three'), 'the three messages');
      const after = reads.slice(before).join('');
      const at = bodies.map((b) => after.indexOf(`"body":"${b}"`));
      assert.ok(at.every((i) => i >= 0) && at[0]! < at[1]! && at[1]! < at[2]!, `in order: ${after}`);
      for (const b of bodies) assert.equal(after.split(`"body":"${b}"`).length, 2, `${b} once`);
      const withMessages = reads.slice(before).filter((r) => r.includes('message.created'));
      assert.equal(withMessages.length, 1, `one write for the window's three frames: ${JSON.stringify(withMessages)}`);
    } finally {
      sock.destroy();
    }
  });
});
