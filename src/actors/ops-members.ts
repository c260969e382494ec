/**
 * Membership steps (barriers). DIRECT membership never changes; an ARCHIVED conversation takes
 * no new members, but leaving (and removal) stays possible: the contract says leaving is always
 * allowed. Mailbox-only steps.
 */
import { eventHead } from './events.ts';
import type { MemberRecord, MemberView } from '../store/index.ts';
import { archived, directImmutable, memberNotFound } from './errors.ts';
import type { ActorState, ConversationActor } from './conversation-actor.ts';
import type { AddMemberIntent, AddMemberResult, RemoveMemberIntent, RemoveMemberResult } from './types.ts';
import { eventMember } from './wire.ts';

/** Mailbox-only. Adds the user, or reactivates a LEFT/REMOVED member (same member_id). */
export async function addMemberInMailbox(actor: ConversationActor, s: ActorState, intent: AddMemberIntent): Promise<AddMemberResult> {
  const { store } = actor.env;
  const c = s.conversation;
  if (c.type === 'DIRECT') throw directImmutable();
  if (c.status !== 'ACTIVE') throw archived();
  const at = actor.timestamp();
  const result = await store.members.add({
    member_id: actor.env.newId(),
    user_id: intent.user_id,
    role: intent.role ?? 'MEMBER',
    ...actor.writeInMailbox(s, at),
  });
  if (!result) throw actor.goneInMailbox();
  const member = await withProfile(actor, c.tenant_id, result.member);
  if (result.changed) {
    s.members.set(intent.user_id, true);
    c.member_count += 1;
    await actor.publishInMailbox(s, {
      type: 'member.added',
      ...eventHead(c, at, c.last_seq),
      data: { member: eventMember(member), conversation: await actor.eventConversationInMailbox(s), by: intent.by },
    });
  }
  return { member, changed: result.changed };
}

/** Mailbox-only. Leaving (LEFT) when `by` is the member, removal (REMOVED) otherwise. */
export async function removeMemberInMailbox(actor: ConversationActor, s: ActorState, intent: RemoveMemberIntent): Promise<RemoveMemberResult> {
  const { store } = actor.env;
  const c = s.conversation;
  if (c.type === 'DIRECT') throw directImmutable();
  const at = actor.timestamp();
  const status = intent.by.user_id === intent.user_id ? 'LEFT' : 'REMOVED';
  const result = await store.members.setStatus({ user_id: intent.user_id, status, ...actor.writeInMailbox(s, at) });
  if (!result) throw memberNotFound(); // never a member (the conversation itself was checked at activation)
  if (result.changed) {
    s.members.set(intent.user_id, false);
    c.member_count -= 1;
    const member = await withProfile(actor, c.tenant_id, result.member);
    await actor.publishInMailbox(s, {
      type: 'member.removed',
      ...eventHead(c, at, c.last_seq),
      data: { member: eventMember(member), by: intent.by },
    });
  }
  return result;
}

async function withProfile(actor: ConversationActor, tenant_id: string, member: MemberRecord): Promise<MemberView> {
  const profile = (await actor.env.store.profiles.get(tenant_id, [member.user_id]))[0];
  return { member_id: member.member_id, conversation_id: member.conversation_id, user_id: member.user_id, role: member.role, status: member.status, joined_at: member.joined_at, updated_at: member.updated_at, display_name: profile?.display_name ?? null, avatar_url: profile?.avatar_url ?? null };
}
