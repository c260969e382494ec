/**
 * Who receives an event: the channels it is published to (docs/events.md has the table).
 *
 *  - DIRECT and GROUP: every ACTIVE member's own channel (after the mutation), plus the member
 *    an event is about when they are no longer active (member.removed reaches the removed user).
 *  - CHANNEL: once, on the conversation's channel, which its members' streams follow; plus the
 *    own channel of the user a membership event is about (member.added tells a new member, who
 *    then asks for a credential covering the channel; member.removed tells the one who left) and
 *    of every initial member on conversation.created (nobody follows a new channel yet).
 *  - read.updated in a CHANNEL goes to the reader's own channel only: it syncs the reader's other
 *    devices; broadcasting every reader's marker to every member of a channel would cost
 *    members x readers and tell nobody anything useful. In DIRECT and GROUP it reaches all
 *    members (read receipts).
 */
import { conversationChannel, userChannel } from '../bus/index.ts';
import type { ConversationType } from '../store/index.ts';
import type { ChatEventBody } from './events.ts';

/** The user a membership event is about. */
function subjectOf(event: ChatEventBody): string | null {
  return event.type === 'member.added' || event.type === 'member.removed' ? event.data.member.user_id : null;
}

/**
 * The channels for `event` in a conversation of `type`. `activeMembers` is consulted for DIRECT
 * and GROUP only (CHANNEL fan-out never needs the member list); `alsoUsers` get the event on
 * their own channel too (initial members of a new CHANNEL).
 */
export function channelsFor(
  event: ChatEventBody,
  type: ConversationType,
  activeMembers: Iterable<string>,
  alsoUsers: readonly string[] = [],
): string[] {
  const t = event.tenant_id;
  const subject = subjectOf(event);
  if (type === 'CHANNEL') {
    if (event.type === 'read.updated') return [userChannel(t, event.data.user_id)];
    const users = new Set(alsoUsers);
    if (subject !== null) users.add(subject);
    return [conversationChannel(t, event.application_id, event.conversation_id), ...[...users].map((u) => userChannel(t, u))];
  }
  const users = new Set(activeMembers);
  if (subject !== null) users.add(subject);
  for (const u of alsoUsers) users.add(u);
  return [...users].map((u) => userChannel(t, u));
}
