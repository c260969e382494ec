/**
 * Message steps: send (pipelined), edit and delete (barriers). Mailbox-only: each function is a
 * step run by ConversationActor.run/runPipelined with the actor's hot state.
 */
import { eventHead, type PushJob } from './events.ts';
import { ApiError } from '../errors/catalog.ts';
import type { MessageView, ProfileSummary } from '../store/index.ts';
import { archived, messageNotFound } from './errors.ts';
import type { ActorState, ConversationActor, Later } from './conversation-actor.ts';
import type { ActingPrincipal, DeleteMessageIntent, EditMessageIntent, MessageChangeScope, SendMessageIntent, SendMessageResult } from './types.ts';
import { eventMessage } from './wire.ts';
import { OnlineMemo, type Presence } from '../presence/index.ts';

/** Mailbox-only. Validates, assigns the seq, issues the append; `done` settles after publish. */
export async function sendInMailbox(actor: ConversationActor, s: ActorState, intent: SendMessageIntent, early?: Promise<MessageView | null>): Promise<Later<SendMessageResult>> {
  const { store } = actor.env;
  const c = s.conversation;
  if (intent.message_id !== undefined) {
    // A retry answers the original, even once the conversation was archived since.
    const pending = actor.pendingSends.get(intent.message_id);
    if (pending) return { done: pending.then((r) => ({ message: r.message, created: false })) };
    const stored = await (early ?? store.messages.get(c, intent.message_id, intent.sender_user_id));
    if (stored) {
      // The first try's write failed here after it landed (an ambiguous store answer, e.g. a
      // Cassandra write timeout): it published nothing, so this retry announces the message once.
      if (actor.failedSends.delete(intent.message_id)) await announceInMailbox(actor, s, stored);
      return { done: Promise.resolve({ message: stored, created: false }) };
    }
  }
  if (c.status !== 'ACTIVE') throw archived();
  const sender = intent.sender_user_id;
  if (sender === null) {
    if (intent.message_type !== 'SYSTEM') throw new RangeError('only SYSTEM messages are sent without a sender');
  } else if (!(await s.members.isActive(store, c, sender))) {
    throw intent.sender_client_id !== null
      ? new ApiError('actor_not_member', `actor_user_id ${sender} is not a member of the conversation`)
      : new ApiError('not_conversation_member', 'you are not a member of this conversation');
  }
  const replyTo = intent.reply_to_message_id ?? null;
  if (replyTo !== null && !actor.pendingSends.has(replyTo)) {
    const target = await store.messages.get(c, replyTo, null);
    if (!target || target.status === 'DELETED') throw new ApiError('invalid_reply', 'reply_to_message_id is not a message of this conversation');
  }
  // From here to the append nothing awaits: the seq is taken and the write issued in one go.
  const seq = (c.last_seq += 1);
  const at = actor.timestamp();
  const message_id = intent.message_id ?? actor.env.newId();
  const write = store.messages.append({
    message_id,
    seq,
    sender_user_id: sender,
    sender_client_id: intent.sender_client_id,
    body: intent.body,
    message_type: intent.message_type,
    reply_to_message_id: replyTo,
    attachments: intent.attachments ?? [],
    mentioned_user_ids: [...new Set(intent.mentioned_user_ids ?? [])],
    // A caller-chosen id (an Idempotency-Key's) may be retried after an ambiguous failure.
    ...(intent.message_id !== undefined ? { retryable_id: true } : {}),
    ...actor.writeInMailbox(s, at),
  });
  // The sender's profile is read now, beside the append, not in the continuation: continuations
  // run one after the other, so a read there (a round trip on Cassandra) would cap one
  // conversation's sends at one per read latency.
  const profileRead = sender === null ? null : store.profiles.get(c.tenant_id, [sender]);
  profileRead?.catch(() => {}); // awaited below; a write that fails first must not leave it unhandled
  const done = actor.commitInMailbox(write, async (result): Promise<SendMessageResult> => {
    if (!result) throw actor.goneInMailbox();
    const { message, created } = result;
    const profile = profileRead === null ? null : ((await profileRead)[0] ?? null);
    const senderView: ProfileSummary | null = sender === null ? null : { user_id: sender, display_name: profile?.display_name ?? null, avatar_url: profile?.avatar_url ?? null };
    const view: MessageView = { reactions: [], sender: senderView, ...message };
    // A retry of a keyed send whose first try failed here announces it, whichever try stored it.
    const failedBefore = intent.message_id !== undefined && actor.failedSends.delete(message_id);
    if (created || failedBefore) await announceInMailbox(actor, s, view);
    return { message: view, created };
  });
  if (intent.message_id !== undefined) {
    // Only an id the caller chose can be named before this send is answered (a retry of it, or a
    // reply to it, e.g. forwarded in a cluster). An id made here is known to nobody until its
    // commit, after which the store answers for it. Not tracking those saves a Map insert and a
    // delete per send, and the delete reallocated the Map's table, which was then promoted.
    actor.pendingSends.set(message_id, done);
    const forget = (): void => void actor.pendingSends.delete(message_id);
    write.catch(() => {
      const failed = actor.failedSends;
      failed.add(message_id);
      if (failed.size > MAX_FAILED_SENDS) failed.delete(failed.values().next().value!);
    });
    done.then(forget, forget);
  }
  return { done };
}

/** Ids of failed keyed sends an actor remembers (see ConversationActor.failedSends). */
const MAX_FAILED_SENDS = 1000;

/** Mailbox-only. The events of a new message: message.created to the members, the push job. */
async function announceInMailbox(actor: ConversationActor, s: ActorState, view: MessageView): Promise<void> {
  const c = s.conversation;
  if (view.created_at > c.last_activity_at) c.last_activity_at = view.created_at;
  await actor.publishInMailbox(s, {
    type: 'message.created',
    tenant_id: c.tenant_id,
    application_id: c.application_id,
    conversation_id: c.conversation_id,
    seq: view.seq,
    occurred_at: view.created_at,
    data: { message: eventMessage(view) },
  });
  enqueuePush(actor, s, view);
}

/** Mailbox-only. Replaces the body; answers the message as the editor sees it. */
export async function editInMailbox(actor: ConversationActor, s: ActorState, intent: EditMessageIntent): Promise<MessageView> {
  const { store } = actor.env;
  const c = s.conversation;
  if (c.status !== 'ACTIVE') throw archived();
  await changeableInMailbox(actor, s, intent.message_id, intent.by, intent.scope);
  const at = actor.timestamp();
  const edited = await store.messages.edit({
    message_id: intent.message_id,
    body: intent.body,
    ...actor.writeInMailbox(s, at),
    ...(intent.mentioned_user_ids === undefined ? {} : { mentioned_user_ids: [...new Set(intent.mentioned_user_ids)] }),
  });
  const view = edited && (await store.messages.get(c, intent.message_id, intent.by.user_id));
  if (!view) throw actor.goneInMailbox();
  await actor.publishInMailbox(s, {
    type: 'message.updated',
    ...eventHead(c, at, c.last_seq),
    data: { message: eventMessage(view), by: intent.by },
  });
  return view;
}

/** Mailbox-only. Tombstones the message; deleting a tombstone again changes nothing. */
export async function deleteInMailbox(actor: ConversationActor, s: ActorState, intent: DeleteMessageIntent): Promise<void> {
  const { store } = actor.env;
  const c = s.conversation;
  if (c.status !== 'ACTIVE') throw archived();
  const current = await store.messages.get(c, intent.message_id, null);
  if (!current) throw messageNotFound();
  if (current.status === 'DELETED') return;
  authorize(current, intent.by, intent.scope);
  const at = actor.timestamp();
  const tombstone = await store.messages.tombstone({ message_id: intent.message_id, ...actor.writeInMailbox(s, at) });
  if (!tombstone) throw actor.goneInMailbox();
  await actor.publishInMailbox(s, {
    type: 'message.deleted',
    ...eventHead(c, at, c.last_seq),
    data: { message: eventMessage({ sender: current.sender, reactions: [], ...tombstone }), by: intent.by },
  });
}

/** The message exists, is not a tombstone, and `by` may change it. */
async function changeableInMailbox(actor: ConversationActor, s: ActorState, message_id: string, by: ActingPrincipal, scope: MessageChangeScope): Promise<MessageView> {
  const current = await actor.env.store.messages.get(s.conversation, message_id, null);
  if (!current || current.status === 'DELETED') throw messageNotFound();
  authorize(current, by, scope);
  return current;
}

function authorize(message: MessageView, by: ActingPrincipal, scope: MessageChangeScope): void {
  if (scope === 'any') return;
  if (by.user_id === null || message.sender_user_id !== by.user_id) {
    throw new ApiError('missing_capability', "changing another user's message needs the messages.delete permission");
  }
}

/**
 * Best effort: a refused job never fails the send (the contract: a push never fails a send).
 * With presence (ActorHostOptions.presence), a DIRECT or GROUP message whose candidates are all
 * online when it commits makes no job: they all get the realtime event, and the queue, the
 * worker and its device reads are spared (an active group's common case). Otherwise the job
 * carries every candidate, as without presence, and the worker drops whoever is online when it
 * runs (and counts their devices). If presence cannot answer, the job goes.
 */
function enqueuePush(actor: ConversationActor, s: ActorState, message: MessageView): void {
  const { env } = actor;
  if (!env.enqueuePush) return;
  const c = s.conversation;
  let candidates: string[] | undefined;
  if (c.type === 'CHANNEL') {
    // Only mentioned members may be pushed: a CHANNEL message without mentions pushes nobody.
    if (message.mentioned_user_ids.length === 0) return;
  } else {
    const active = s.members.activeIfComplete();
    if (active !== null) {
      candidates = [];
      for (const id of active) if (id !== message.sender_user_id) candidates.push(id);
      if (candidates.length === 0) return;
    }
  }
  const job: PushJob = { tenant_id: c.tenant_id, application_id: c.application_id, conversation_id: c.conversation_id, message_id: message.message_id, sent_at: message.created_at };
  if (candidates) job.candidates = candidates;
  if (candidates === undefined || env.presence === null) return queue(env, job);
  let memo = memos.get(env.presence);
  if (memo === undefined) memos.set(env.presence, (memo = new OnlineMemo(env.presence)));
  const online = memo.allOnline(c.tenant_id, candidates, env.now());
  if (online === true) {
    env.stats.pushJobsSkippedOnline += 1;
    return;
  }
  online.then(
    (all) => {
      if (!all) return queue(env, job);
      env.stats.pushJobsSkippedOnline += 1;
    },
    () => queue(env, job),
  );
}

/** Per presence driver (one per node), who was seen online and until when (presence/online-memo.ts). */
const memos = new WeakMap<Presence, OnlineMemo>();

function queue(env: ConversationActor['env'], job: PushJob): void {
  env.bus.enqueue(job).catch((error: unknown) => {
    env.stats.pushJobsDropped += 1;
    // Logged at powers of two: a full queue under load must not add a log line per send.
    const n = env.stats.pushJobsDropped;
    if ((n & (n - 1)) === 0) env.log.warn({ err: String(error), dropped: n }, 'push job dropped');
  });
}
