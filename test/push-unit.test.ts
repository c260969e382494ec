/** The push document rules and the push/presence settings, without a node. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/index.ts';
import { pushBody, pushDocument, pushTitle } from '../src/push/payload.ts';
import type { ConversationRecord, MessageView } from '../src/store/index.ts';

const message = (over: Partial<MessageView>): MessageView => ({
  message_id: 'm1',
  conversation_id: 'c1',
  tenant_id: 't1',
  application_id: 'a1',
  seq: 1,
  sender_user_id: 'u1',
  sender_client_id: null,
  body: 'hi',
  message_type: 'TEXT',
  reply_to_message_id: null,
  attachments: [],
  mentioned_user_ids: [],
  status: 'ACTIVE',
  edited_at: null,
  deleted_at: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  reactions: [],
  sender: { user_id: 'u1', display_name: 'Una', avatar_url: null },
  ...over,
});
const file = { file_id: 'f', name: 'a.png', mime_type: 'image/png', size: 1, url: null };

test('title: display name, else user id; no sender: conversation name, else New message', () => {
  assert.equal(pushTitle(message({}), { name: 'Room' }), 'Una');
  assert.equal(pushTitle(message({ sender: { user_id: 'u1', display_name: null, avatar_url: null } }), { name: 'Room' }), 'u1');
  assert.equal(pushTitle(message({ sender: null }), { name: 'Room' }), 'u1');
  assert.equal(pushTitle(message({ sender_user_id: null, sender: null }), { name: 'Room' }), 'Room');
  assert.equal(pushTitle(message({ sender_user_id: null, sender: null }), { name: null }), 'New message');
  assert.equal(pushTitle(message({ sender_user_id: null, sender: null }), { name: '' }), 'New message');
});

test('body: 200 code points then an ellipsis; the attachment word when there is no text', () => {
  assert.equal(pushBody({ body: 'x'.repeat(200), attachments: [] }), 'x'.repeat(200));
  assert.equal(pushBody({ body: 'x'.repeat(201), attachments: [] }), `${'x'.repeat(200)}…`);
  assert.equal(pushBody({ body: '😀'.repeat(201), attachments: [] }), `${'😀'.repeat(200)}…`, 'never splits a surrogate pair');
  assert.equal(pushBody({ body: '', attachments: [file] }), 'Attachment');
  assert.equal(pushBody({ body: '  ', attachments: [file, file] }), 'Attachment');
  assert.equal(pushBody({ body: 'see file', attachments: [file] }), 'see file');
});

test('document: notification and exactly the four ids in data', () => {
  const d = pushDocument(message({ body: 'secret text' }), { name: null } as ConversationRecord);
  assert.deepEqual(d, { notification: { title: 'Una', body: 'secret text' }, data: { tenant_id: 't1', application_id: 'a1', conversation_id: 'c1', message_id: 'm1' } });
});

test('settings: defaults, and wrong values refused', () => {
  const c = loadConfig({});
  assert.deepEqual(c.presence, { driver: 'memory', windowMs: 60_000 });
  assert.equal(c.webPush.concurrency, 8);
  assert.equal(c.webPush.timeoutMs, 10_000);
  assert.equal(c.webPush.caFile, null);
  assert.throws(
    () => loadConfig({ CHAT_PRESENCE_WINDOW_MS: '5', CHAT_PUSH_CONCURRENCY: '0', CHAT_PUSH_CA_FILE: '/nonexistent/ca.pem' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 3, err.message);
      assert.match(err.message, /CHAT_PRESENCE_WINDOW_MS/);
      assert.match(err.message, /CHAT_PUSH_CONCURRENCY/);
      assert.match(err.message, /CHAT_PUSH_CA_FILE/);
      return true;
    },
  );
});
