/**
 * Event payloads: the API's wire shapes (src/api/schemas/chat.ts, projected by src/api/wire.ts),
 * minus what depends on the viewer. Events go to many viewers at once, so a Conversation has no
 * `my_role`, `has_unread` or `unread_count`, and a reaction no `reacted_by_me`.
 */
import type { Static } from '@sinclair/typebox';
import type { Conversation, Member, Message } from '../api/schemas/chat.ts';
import { conversationWire, memberWire, messageWire } from '../api/wire.ts';
import type { ConversationView, MemberView, MessageView } from '../store/index.ts';

export interface EventReaction {
  emoji: string;
  count: number;
}

export type EventMessage = Omit<Static<typeof Message>, 'reactions'> & { reactions: EventReaction[] };
export type EventMember = Static<typeof Member>;
export type EventConversation = Omit<Static<typeof Conversation>, 'my_role' | 'has_unread' | 'unread_count'>;

export function eventMessage(view: MessageView): EventMessage {
  // The wire object is fresh: its reactions are replaced in place (keeps the field order; no
  // literal starting with a spread, see test/object-spread.test.ts).
  const message = messageWire(view) as unknown as EventMessage;
  message.reactions = view.reactions.map((r) => ({ emoji: r.emoji, count: r.count }));
  return message;
}

export function eventMember(view: MemberView): EventMember {
  return memberWire(view);
}

/** `view` as a machine sees it (store.conversations.get with the members preview). */
export function eventConversation(view: ConversationView): EventConversation {
  return conversationWire(view, false);
}
