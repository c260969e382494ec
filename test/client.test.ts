/**
 * The typed API client (client/): its types are exactly what openapi-typescript makes of
 * schema/openapi.json (this fails when they disagree: run `npm run client`), every event the node
 * publishes fits its event types (checked by the compiler), and it works against a started node:
 * typed calls, ChatApiError with the contract's code, and the realtime stream resuming across a
 * fresh credential.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { ChatApiError, createChatClient, done, ok, type ChatEvent, type Message } from '../client/index.ts';
import { RealtimeConnection, type EventSourceCtor } from '../client/realtime.ts';
import { createSignInClient, type SignInConfig, type SignInRequest, type WebSession } from '../client/web-sign-in.ts';
import type { Static } from '@sinclair/typebox';
import type { SignInConfig as NodeSignInConfig, SignInRequest as NodeSignInRequest, WebSession as NodeWebSession } from '../src/api/schemas/auth.ts';
import { generatedTypes, TYPES_FILE } from '../client/generate.ts';
import type { ChatEvent as NodeEvent } from '../src/actors/events.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

// Compile time: whatever the node publishes is a ChatEvent of the client.
const fits = (e: NodeEvent): ChatEvent => e;
void fits;
// Compile time: the hand-written sign-in client (no operations of the API, so not generated)
// has exactly the node's wire shapes, both ways.
const same = <A, B>(a: (x: A) => B, b: (x: B) => A): void => void [a, b];
same((x: Static<typeof NodeWebSession>): WebSession => x, (x: WebSession): Static<typeof NodeWebSession> => x);
same((x: Static<typeof NodeSignInConfig>): SignInConfig => x, (x: SignInConfig): Static<typeof NodeSignInConfig> => x);
same((x: Static<typeof NodeSignInRequest>): SignInRequest => x, (x: SignInRequest): Static<typeof NodeSignInRequest> => x);

describe('typed API client', () => {
  test('client/openapi.d.ts is what schema/openapi.json generates', async () => {
    const want = await generatedTypes();
    assert.ok(fs.readFileSync(TYPES_FILE, 'utf8') === want, 'client/openapi.d.ts is stale: run `npm run client` and commit it');
  });

  describe('against a node', () => {
    let node: TestNode;
    before(async () => {
      node = await startTestNode();
    });
    after(async () => {
      await node.stop();
    });

    test('typed calls, errors with the contract code, and a stream that resumes under a fresh credential', async () => {
      const bob = await userToken(node.idp, 'bob', 'chat-web');
      const carol = await userToken(node.idp, 'carol', 'chat-web');
      const asBob = createChatClient({ baseUrl: node.api, token: () => bob });
      const asCarol = createChatClient({ baseUrl: node.api, token: () => carol });
      const ctx = { tenant_id: 'acme', application_id: 'support' };

      const me = await ok(asBob.GET('/me'));
      assert.equal(me.user_id, 'bob');
      const err = await ok(createChatClient({ baseUrl: node.api }).GET('/me')).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof ChatApiError);
      assert.equal(err.code, 'invalid_token');
      assert.equal(err.status, 401);

      const conv = await ok(asCarol.POST('/tenants/{tenant_id}/applications/{application_id}/conversations', {
        params: { path: ctx },
        body: { type: 'GROUP', name: 'client test', member_user_ids: ['bob'] },
      }));
      const path = { ...ctx, conversation_id: conv.conversation_id };

      const seen: string[] = [];
      let credentials = 0;
      const stream = new RealtimeConnection({
        credential: async () => {
          credentials++;
          return ok(asBob.GET('/tenants/{tenant_id}/applications/{application_id}/notifications/realtime-token', { params: { path: ctx } }));
        },
        onEvent: (e) => {
          if (e.type === 'message.created') seen.push(e.data.message.body);
        },
        EventSource: EventSource as unknown as EventSourceCtor,
      });
      const opened = new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (stream.position !== '') {
            clearInterval(check);
            resolve();
          }
        }, 20);
      });
      stream.start();
      await opened;
      const send = (body: string): Promise<Message> =>
        ok(asCarol.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', { params: { path }, body: { body } }));
      await send('one');
      await waitFor(() => seen.length === 1);
      stream.stop();
      await send('two'); // while disconnected
      stream.start(); // a fresh credential, resuming from the last id
      await send('three');
      await waitFor(() => seen.length === 3);
      assert.deepEqual(seen, ['one', 'two', 'three']);
      assert.equal(credentials, 2);
      stream.stop();
      await done(asBob.DELETE('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members/{user_id}', { params: { path: { ...path, user_id: 'bob' } } }));
    });

    test('the web sign-in client: config, and the contract code of a refused renewal', async () => {
      const auth = createSignInClient({ origin: node.origin });
      const config = await auth.config();
      assert.match(config.authorization_endpoint, /\/oauth\/authorize$/);
      assert.ok(config.client_id.length > 0);
      await assert.rejects(auth.renew('a.b.c'), (err: unknown) => err instanceof ChatApiError && err.status === 401 && err.code === 'invalid_id_token');
      await auth.signOut(['junk']);
    });
  });
});

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
