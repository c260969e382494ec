/**
 * A tenant's backdated message history for retention benches: which conversations talk how much
 * on which days, and writing it through the store's own append (the actor's input, `at` set to
 * the message's time in the past), so every derived row a real append writes (the retention work
 * list per day, the id lookup, the conversation head) is there.
 *
 * Traffic: conversation i of n gets messagesPerDay * (1/(i+1)) / H(n) messages a day (Zipf: a few
 * busy conversations that fill several seq buckets, a long tail of quiet ones), evenly spaced
 * with a seeded jitter. Every `dormantEvery`-th conversation (the second busiest, then every k-th
 * after it) stopped talking before the retention window opened: its whole history expires, which is the case where a newest-page read finds no
 * live row to stop at.
 */
import { randomUUID } from 'node:crypto';
import type { CassandraChatStore } from '../../src/store/cassandra/cassandra-store.ts';
import type { ConversationRecord } from '../../src/store/index.ts';

export const DAY_MS = 24 * 60 * 60 * 1000;
const USERS = ['alice', 'bob', 'carol'];
const BODY = 'lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(3);

export interface HistoryPlan {
  tenant_id: string;
  application_id: string;
  days: number;
  conversations: number;
  messagesPerDay: number;
  /** 0: none; k: conversations 1, k+1, 2k+1, ... (0-based, busiest first) are dormant. */
  dormantEvery: number;
  /** Stops of dormant conversations: this many days before now (older than the retention cutoff). */
  dormantSinceDays: number;
  /** "Now": the newest message is just before it. */
  now: number;
  seed: number;
}

export interface PlannedConversation {
  conversation_id: string;
  dormant: boolean;
  /** Messages, oldest first: seq i + 1 at times[i] (ms). */
  times: number[];
}

/** mulberry32: a small seeded PRNG, so a plan is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** From the second busiest on, so one dormant conversation had a busy past (a long expired history). */
const isDormant = (plan: HistoryPlan, i: number): boolean => plan.dormantEvery > 0 && i % plan.dormantEvery === 1;

export function planHistory(plan: HistoryPlan): PlannedConversation[] {
  const random = prng(plan.seed);
  let harmonic = 0;
  for (let i = 1; i <= plan.conversations; i += 1) harmonic += 1 / i;
  const start = plan.now - plan.days * DAY_MS;
  return Array.from({ length: plan.conversations }, (_, i) => {
    const perDay = (plan.messagesPerDay / (i + 1)) / harmonic;
    const interval = DAY_MS / perDay;
    const dormant = isDormant(plan, i);
    const end = dormant ? plan.now - plan.dormantSinceDays * DAY_MS : plan.now - 1;
    const times: number[] = [];
    for (let t = start + random() * interval; t < end; t += interval * (0.5 + random())) times.push(Math.floor(t));
    return { conversation_id: randomUUID(), dormant, times };
  });
}

/** Creates the conversations (at the history's start) and answers their records (epoch to append with). */
export async function createConversations(store: CassandraChatStore, plan: HistoryPlan, convs: PlannedConversation[]): Promise<Map<string, ConversationRecord>> {
  const at = new Date(plan.now - plan.days * DAY_MS - 60_000).toISOString();
  const out = new Map<string, ConversationRecord>();
  for (const c of convs) {
    const { conversation } = await store.conversations.create({
      tenant_id: plan.tenant_id, application_id: plan.application_id, conversation_id: c.conversation_id, type: 'GROUP', name: 'retention', description: null,
      created_by_user_id: USERS[0]!, created_by_client_id: null, at,
      members: USERS.map((user_id, k) => ({ member_id: randomUUID(), user_id, role: k === 0 ? 'OWNER' : 'MEMBER' })),
    });
    out.set(c.conversation_id, conversation);
  }
  return out;
}

/**
 * Appends every planned message in time order with `writers` concurrent appends. Appends of one
 * conversation are called in seq order (the next is taken from the shared queue only after the
 * previous call was made), which is what the store's per-conversation admission needs, as from
 * an actor.
 */
export async function writeHistory(
  store: CassandraChatStore,
  convs: PlannedConversation[],
  records: Map<string, ConversationRecord>,
  writers: number,
  progress: (done: number, total: number) => void,
): Promise<number> {
  const queue = convs.flatMap((c) => c.times.map((t, i) => ({ c, seq: i + 1, t }))).sort((a, b) => a.t - b.t);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < queue.length) {
      const { c, seq, t } = queue[next++]!;
      const conv = records.get(c.conversation_id)!;
      const result = await store.messages.append({
        tenant_id: conv.tenant_id, application_id: conv.application_id, conversation_id: conv.conversation_id, epoch: conv.epoch,
        message_id: randomUUID(), seq, sender_user_id: USERS[seq % USERS.length]!, sender_client_id: null,
        body: `${seq} ${BODY}`, message_type: 'TEXT', at: new Date(t).toISOString(),
      });
      if (!result?.created) throw new Error(`append of seq ${seq} to ${conv.conversation_id} answered ${JSON.stringify(result)}`);
      if (next % 5000 === 0) progress(next, queue.length);
    }
  };
  await Promise.all(Array.from({ length: writers }, lane));
  return queue.length;
}
