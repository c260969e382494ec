/**
 * What members do around messages: reactions, read markers (barriers) and typing (ordered
 * behind in-flight sends, never stored). Mailbox-only steps.
 */
import { eventHead } from './events.ts';
import { ApiError } from '../errors/catalog.ts';
import { archived, messageNotFound } from './errors.ts';
import type { ActorState, ConversationActor, Later } from './conversation-actor.ts';
import type { MarkReadIntent, MarkReadResult, ReactionIntent, ReactionResult, TypingIntent } from './types.ts';

async function requireMemberInMailbox(actor: ConversationActor, s: ActorState, user_id: string): Promise<void> {
  if (!(await s.members.isActive(actor.env.store, s.conversation, user_id))) {
    throw new ApiError('not_conversation_member', 'you are not a member of this conversation');
  }
}

/** Mailbox-only. Adds or removes the user's reaction; publishes only when something changed. */
export async function reactInMailbox(actor: ConversationActor, s: ActorState, intent: ReactionIntent, add: boolean): Promise<ReactionResult> {
  const { store } = actor.env;
  const c = s.conversation;
  if (c.status !== 'ACTIVE') throw archived();
  await requireMemberInMailbox(actor, s, intent.user_id);
  const at = actor.timestamp();
  const input = { message_id: intent.message_id, user_id: intent.user_id, emoji: intent.emoji, ...actor.writeInMailbox(s, at) };
  const result = add ? await store.reactions.add(input) : await store.reactions.remove(input);
  if (!result) throw messageNotFound(); // absent, or a tombstone: nothing to react to
  if (result.changed) {
    await actor.publishInMailbox(s, {
      type: add ? 'reaction.added' : 'reaction.removed',
      ...eventHead(c, at, c.last_seq),
      data: {
        message_id: intent.message_id,
        user_id: intent.user_id,
        emoji: intent.emoji,
        reactions: result.reactions.map((r) => ({ emoji: r.emoji, count: r.count })),
      },
    });
  }
  return result;
}

/**
 * Mailbox-only. Moves the member's read marker forward. Allowed in an ARCHIVED conversation:
 * reading is not writing content.
 */
export async function markReadInMailbox(actor: ConversationActor, s: ActorState, intent: MarkReadIntent): Promise<MarkReadResult> {
  const c = s.conversation;
  await requireMemberInMailbox(actor, s, intent.user_id);
  const at = actor.timestamp();
  const state = await actor.env.store.readState.markRead({ user_id: intent.user_id, seq: intent.seq, ...actor.writeInMailbox(s, at) });
  if (!state) throw actor.goneInMailbox();
  if (state.changed) {
    await actor.publishInMailbox(s, {
      type: 'read.updated',
      ...eventHead(c, at, c.last_seq),
      data: { user_id: intent.user_id, last_read_seq: state.last_read_seq },
    });
  }
  return state;
}

/**
 * Mailbox-only, pipelined: typing writes nothing, but its event still leaves behind the sends
 * already in flight, so a conversation's events keep leaving in mailbox order (a client that
 * sees "typing" has already seen every message sent before it).
 */
export async function typingInMailbox(actor: ConversationActor, s: ActorState, intent: TypingIntent): Promise<Later<void>> {
  const c = s.conversation;
  if (c.status !== 'ACTIVE') throw archived();
  await requireMemberInMailbox(actor, s, intent.user_id);
  const at = actor.timestamp();
  const done = actor.commitInMailbox(Promise.resolve(), () =>
    actor.publishInMailbox(s, {
      type: 'typing',
      ...eventHead(c, at),
      data: { user_id: intent.user_id },
    }),
  );
  return { done };
}
