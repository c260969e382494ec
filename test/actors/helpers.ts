/**
 * Shared by the actor tests: a real SQLite store in a temp directory, a real local bus, an
 * ActorHost on them, and a recorder of what each channel received.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import { ActorHost, type ActorHostOptions } from '../../src/actors/index.ts';
import type { ChatBus, ChatEvent, ChatEventType } from '../../src/actors/index.ts';
import { toChatEvent } from '../../src/actors/events.ts';
import { conversationChannel, createBus, userChannel, type LocalBusConfig } from '../../src/bus/index.ts';
import type { ChatStore, ConversationRef } from '../../src/store/index.ts';
import { SqliteChatStore } from '../../src/store/sqlite/sqlite-store.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-actors-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

export function tempFile(): string {
  return path.join(root, randomUUID(), 'chat.sqlite');
}

export interface Kit {
  store: SqliteChatStore;
  bus: ChatBus;
  host: ActorHost;
  tenant_id: string;
  application_id: string;
  /** The test clock (epoch ms) the host reads; advance it to age actors. */
  clock: { now: number };
  ref: (conversation_id: string) => ConversationRef;
  /** Records every event published on these users' own channels and these conversations' channels. */
  record: (users: string[], conversations?: string[]) => Recorder;
}

export interface Recorder {
  /** Events received on a channel, in order. */
  on(channel: string): ChatEvent[];
  user(user_id: string): ChatEvent[];
  conversation(conversation_id: string): ChatEvent[];
  /** Types received by a user, in order. */
  typesOf(user_id: string): ChatEventType[];
}

export interface KitOptions {
  host?: Partial<ActorHostOptions>;
  bus?: Omit<LocalBusConfig, 'driver'>;
  /** An existing file (two hosts on one store); shared-file mode either way. */
  file?: string;
  tenant_id?: string;
  /** Wraps the store the host uses (fault injection); the kit keeps the real one. */
  wrapStore?: (store: SqliteChatStore) => ChatStore;
}

/** Runs `body` with a fresh kit; closes host, bus and store after it. */
export async function withKit(body: (kit: Kit) => Promise<void>, options: KitOptions = {}): Promise<void> {
  const kit = await openKit(options);
  try {
    await body(kit);
  } finally {
    await closeKit(kit);
  }
}

export async function openKit(options: KitOptions = {}): Promise<Kit> {
  const store = new SqliteChatStore({ driver: 'sqlite', path: options.file ?? tempFile(), mode: 'shared-file' });
  const bus = createBus({ driver: 'local', ...options.bus }) as ChatBus;
  const clock = { now: Date.parse('2026-03-01T12:00:00.000Z') };
  const host = new ActorHost({ store: options.wrapStore?.(store) ?? store, bus, now: () => clock.now, ...options.host });
  const tenant_id = options.tenant_id ?? `tenant-${randomUUID()}`;
  const application_id = 'app-1';
  const ref = (conversation_id: string): ConversationRef => ({ tenant_id, application_id, conversation_id });
  const record = (users: string[], conversations: string[] = []): Recorder => {
    const seen = new Map<string, ChatEvent[]>();
    const channels = [...users.map((u) => userChannel(tenant_id, u)), ...conversations.map((c) => conversationChannel(tenant_id, application_id, c))];
    for (const channel of channels) {
      seen.set(channel, []);
      bus.subscribe(channel, (entry) => seen.get(channel)!.push(toChatEvent(entry)));
    }
    const on = (channel: string): ChatEvent[] => seen.get(channel) ?? [];
    return {
      on,
      user: (u) => on(userChannel(tenant_id, u)),
      conversation: (c) => on(conversationChannel(tenant_id, application_id, c)),
      typesOf: (u) => on(userChannel(tenant_id, u)).map((e) => e.type),
    };
  };
  return { store, bus, host, tenant_id, application_id, clock, ref, record };
}

export async function closeKit(kit: Kit): Promise<void> {
  await kit.host.close();
  await kit.bus.close();
  await kit.store.close();
}

/** Creates a GROUP (owner first), CHANNEL or DIRECT through the host; answers its id. */
export async function create(kit: Kit, type: 'GROUP' | 'CHANNEL' | 'DIRECT', users: string[]): Promise<string> {
  const { conversation } = await kit.host.createConversation({
    tenant_id: kit.tenant_id,
    application_id: kit.application_id,
    type,
    name: type === 'DIRECT' ? null : `${type.toLowerCase()} test`,
    description: null,
    created_by_user_id: users[0] ?? null,
    created_by_client_id: null,
    member_user_ids: users.slice(1),
  });
  return conversation.conversation_id;
}

export function text(sender: string, body: string, extra: Record<string, unknown> = {}): { sender_user_id: string; sender_client_id: null; body: string; message_type: 'TEXT' } {
  return { sender_user_id: sender, sender_client_id: null, body, message_type: 'TEXT', ...extra };
}

/** Every message of a conversation, oldest first. */
export async function history(kit: Kit, conversation_id: string): Promise<Array<{ seq: number; body: string; message_id: string; status: string }>> {
  const page = await kit.store.messages.list({ ...kit.ref(conversation_id), viewer_user_id: null, limit: 1000 });
  return (page?.items ?? []).reverse().map((m) => ({ seq: m.seq, body: m.body, message_id: m.message_id, status: m.status }));
}

/** Asserts `promise` rejects with an ApiError of `code`. */
export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    const actual = (error as { code?: unknown }).code;
    if (actual === code) return;
    throw new Error(`expected rejection with ${code}, got ${String(actual)}: ${String(error)}`);
  }
  throw new Error(`expected rejection with ${code}, but it resolved`);
}
