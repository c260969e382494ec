/**
 * Helpers of the store contract suite. Every test gets a fresh store from the driver's `make`
 * and its own tenant (a random id), so a shared backend (Cassandra) needs no cleanup between
 * tests. Time is passed explicitly through `at`, never read from the clock, so orderings are
 * deterministic.
 */
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import type { ChatStore, ConversationRecord, MemberRole, MessageRecord, StoreContext } from '../types.ts';
import type { AppendMessageInput } from '../types-messages.ts';

export type MakeStore = () => Promise<ChatStore>;

export interface TestKit {
  store: ChatStore;
  ctx: StoreContext;
  /** A monotonically increasing timestamp per call (one second apart), from 2026-01-01. */
  tick: () => string;
  /** The timestamp `seconds` after the start of the test's clock. */
  at: (seconds: number) => string;
}

const START = Date.parse('2026-01-01T00:00:00.000Z');

export function timeAt(seconds: number): string {
  return new Date(START + seconds * 1000).toISOString();
}

/** Declares one test with a fresh store and context; the store is closed after it. */
export function storeTest(make: MakeStore): (title: string, body: (kit: TestKit) => Promise<void>) => void {
  return (title, body) => {
    it(title, async () => {
      const store = await make();
      let n = 0;
      const kit: TestKit = {
        store,
        ctx: { tenant_id: `tenant-${randomUUID()}`, application_id: 'app-1' },
        tick: () => timeAt((n += 1)),
        at: timeAt,
      };
      try {
        await body(kit);
      } finally {
        await store.close();
      }
    });
  };
}

export interface CreateOptions {
  type?: 'GROUP' | 'CHANNEL' | 'DIRECT';
  visibility?: string;
  name?: string;
  at?: string;
  ctx?: StoreContext;
  conversation_id?: string;
}

/** Creates a conversation whose first user is OWNER and the others MEMBERs. */
export async function createConversation(kit: TestKit, users: string[], options: CreateOptions = {}): Promise<ConversationRecord> {
  const type = options.type ?? 'GROUP';
  // Members created together share joined_at; sorted ids make (joined_at, member_id) = list order.
  const ids = users.map(() => randomUUID()).sort();
  const { conversation } = await kit.store.conversations.create({
    ...(options.ctx ?? kit.ctx),
    conversation_id: options.conversation_id ?? randomUUID(),
    type,
    ...(options.visibility === undefined ? {} : { visibility: options.visibility }),
    name: type === 'DIRECT' ? null : (options.name ?? `${type.toLowerCase()} of ${users[0]}`),
    description: null,
    created_by_user_id: users[0] ?? null,
    created_by_client_id: null,
    members: users.map((user_id, i) => ({ member_id: ids[i]!, user_id, role: (i === 0 && type !== 'DIRECT' ? 'OWNER' : 'MEMBER') as MemberRole })),
    at: options.at ?? kit.tick(),
  });
  return conversation;
}

export function messageInput(
  conv: ConversationRecord,
  seq: number,
  sender: string | null,
  extra: Partial<AppendMessageInput> = {},
): AppendMessageInput {
  return {
    tenant_id: conv.tenant_id,
    application_id: conv.application_id,
    conversation_id: conv.conversation_id,
    epoch: conv.epoch,
    message_id: randomUUID(),
    seq,
    sender_user_id: sender,
    sender_client_id: null,
    body: `message ${seq}`,
    message_type: sender === null ? 'SYSTEM' : 'TEXT',
    ...extra,
  };
}

/** Appends and answers the stored message (asserting the conversation exists). */
export async function send(kit: TestKit, conv: ConversationRecord, seq: number, sender: string | null, extra: Partial<AppendMessageInput> = {}): Promise<MessageRecord> {
  const result = await kit.store.messages.append(messageInput(conv, seq, sender, { at: kit.tick(), ...extra }));
  if (!result) throw new Error(`append to ${conv.conversation_id} answered null`);
  return result.message;
}

export function ref(conv: ConversationRecord): { tenant_id: string; application_id: string; conversation_id: string } {
  return { tenant_id: conv.tenant_id, application_id: conv.application_id, conversation_id: conv.conversation_id };
}

/** A write's common fields for a conversation, with its current epoch. */
export function w(conv: ConversationRecord, at?: string): { tenant_id: string; application_id: string; conversation_id: string; epoch: number; at?: string } {
  return { ...ref(conv), epoch: conv.epoch, ...(at === undefined ? {} : { at }) };
}
