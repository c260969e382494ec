/**
 * The push pipeline without an HTTP node: a real SQLite store in a temp directory, the memory
 * presence driver, the in-process bus retrying with pushRetryPolicy (as node.ts configures it)
 * and the real PushWorker with the senders a test gives. Messages are stored and their push jobs
 * enqueued as the conversation actor does; devices are registered through the store.
 *
 * The seeded GROUP conversation: bob (the sender, "Bob Baker"), carol, frank and dave.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatBus } from '../../src/actors/events.ts';
import { createBus, type RetryPolicy } from '../../src/bus/index.ts';
import { createPresence, type Presence } from '../../src/presence/index.ts';
import { pushRetryPolicy } from '../../src/push/retry.ts';
import { PushWorker } from '../../src/push/push-worker.ts';
import type { PushSenders } from '../../src/push/sender.ts';
import { createStore, sqliteStorePath, type ChatStore, type PushPlatform } from '../../src/store/index.ts';

export const TENANT = 'acme';
export const APP = 'support';

export interface PushKit {
  store: ChatStore;
  presence: Presence;
  bus: ChatBus;
  worker: PushWorker;
  conversation_id: string;
  logs: Array<{ level: 'warn' | 'debug'; msg: string; obj: Record<string, unknown> }>;
  givenUp: unknown[];
  /** Stores a message from `sender` (null: a SYSTEM message) and enqueues its push job. */
  send(body: string, sender?: string | null): Promise<string>;
  register(user_id: string, platform: PushPlatform, token: string, keys?: { p256dh: string; auth: string }): Promise<void>;
  devices(user_id: string): Promise<string[]>;
  close(): Promise<void>;
}

/** `retry`: the bus's policy; default pushRetryPolicy. */
export async function startPushKit(senders: PushSenders, retry: RetryPolicy = pushRetryPolicy): Promise<PushKit> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'push-kit-'));
  const store = await createStore({ driver: 'sqlite', path: sqliteStorePath(dir) });
  const presence = createPresence({ driver: 'memory', windowMs: 60_000 });
  const givenUp: unknown[] = [];
  const bus: ChatBus = createBus({ driver: 'local', retry, onGiveUp: (_job, err) => givenUp.push(err) });
  const logs: PushKit['logs'] = [];
  const worker = new PushWorker({
    bus, store, presence, senders, concurrency: 4,
    log: { warn: (obj, msg) => logs.push({ level: 'warn', msg, obj }), debug: (obj, msg) => logs.push({ level: 'debug', msg, obj }) },
  });
  const conversation_id = crypto.randomUUID();
  const ref = { tenant_id: TENANT, application_id: APP, conversation_id };
  const { conversation } = await store.conversations.create({
    ...ref, type: 'GROUP', name: 'Chat', description: null, created_by_user_id: 'bob', created_by_client_id: null,
    members: ['bob', 'carol', 'frank', 'dave'].map((user_id, i) => ({ member_id: crypto.randomUUID(), user_id, role: i === 0 ? 'OWNER' : 'MEMBER' })),
  });
  await store.profiles.upsert(TENANT, [{ user_id: 'bob', display_name: 'Bob Baker', avatar_url: null }], 'idp');
  worker.start();
  let seq = 0;
  return {
    store, presence, bus, worker, conversation_id, logs, givenUp,
    async send(body, sender = 'bob') {
      const message_id = crypto.randomUUID();
      seq += 1;
      await store.messages.append({ ...ref, epoch: conversation.epoch, message_id, seq, sender_user_id: sender, sender_client_id: null, body, message_type: sender === null ? 'SYSTEM' : 'TEXT' });
      await bus.enqueue({ ...ref, message_id });
      return message_id;
    },
    async register(user_id, platform, token, keys) {
      await store.pushDevices.upsert({ tenant_id: TENANT, user_id, platform, token_or_endpoint: token, ...keys });
    },
    async devices(user_id) {
      return (await store.pushDevices.listForUsers(TENANT, [user_id])).map((d) => d.token_or_endpoint);
    },
    async close() {
      await worker.close();
      await bus.close();
      await presence.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
