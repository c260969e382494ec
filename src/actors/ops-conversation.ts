/**
 * Conversation lifecycle steps: create, update (name, description), archive and unarchive,
 * soft delete. Barriers, mailbox-only.
 *
 * State rules: ARCHIVED is read-only, so an update of an archived conversation is
 * `conversation_archived`; archiving an archived one (or unarchiving an active one) answers the
 * conversation unchanged and publishes nothing. A deleted conversation is gone: every later step
 * finds nothing (`not_found`).
 */
import { eventHead } from './events.ts';
import { ApiError } from '../errors/catalog.ts';
import type { ConversationPatch, ConversationRecord, MemberRole } from '../store/index.ts';
import { archived } from './errors.ts';
import type { ActorState, ConversationActor } from './conversation-actor.ts';
import { MemberSet } from './members.ts';
import type { ActingPrincipal, CreateConversationIntent, CreateConversationResult, UpdateConversationIntent } from './types.ts';

/**
 * Mailbox-only (of the actor of `conversation_id`). Creates the conversation; a created one
 * becomes this actor's state at once (its epoch is the store's initial one), so the first send
 * needs no claim. DIRECT pairs are deduplicated by the store, also under concurrent creates.
 */
export async function createInMailbox(
  actor: ConversationActor,
  conversation_id: string,
  intent: CreateConversationIntent,
  adopt: (state: ActorState) => void,
): Promise<CreateConversationResult> {
  const creator = intent.created_by_user_id;
  const users = [...new Set(creator === null ? intent.member_user_ids : [creator, ...intent.member_user_ids])];
  if (intent.type === 'DIRECT' && users.length !== 2) throw new ApiError('invalid_request', 'a DIRECT conversation has exactly two members');
  const role = (user_id: string): MemberRole => (intent.type !== 'DIRECT' && user_id === creator ? 'OWNER' : 'MEMBER');
  const { store } = actor.env;
  const result = await store.conversations.create({
    tenant_id: intent.tenant_id,
    application_id: intent.application_id,
    conversation_id,
    type: intent.type,
    ...(intent.visibility === undefined ? {} : { visibility: intent.visibility }),
    name: intent.name,
    description: intent.description,
    created_by_user_id: creator,
    created_by_client_id: intent.created_by_client_id,
    members: users.map((user_id) => ({ member_id: actor.env.newId(), user_id, role: role(user_id) })),
    at: actor.timestamp(),
  });
  if (!result.created) return result;
  const c = result.conversation;
  const s: ActorState = { conversation: c, members: MemberSet.created(c, users, actor.env.maxMembersHeld) };
  adopt(s);
  await actor.publishInMailbox(
    s,
    {
      type: 'conversation.created',
      tenant_id: c.tenant_id,
      application_id: c.application_id,
      conversation_id: c.conversation_id,
      seq: c.last_seq,
      occurred_at: c.created_at,
      data: { conversation: await actor.eventConversationInMailbox(s) },
    },
    c.type === 'CHANNEL' ? users : [],
  );
  return result;
}

/** Mailbox-only. Applies the fields present; publishes conversation.updated when any was. */
export async function updateInMailbox(actor: ConversationActor, s: ActorState, intent: UpdateConversationIntent): Promise<ConversationRecord> {
  const c = s.conversation;
  if (c.status !== 'ACTIVE') throw archived();
  const patch: ConversationPatch = {};
  const changed: Array<'name' | 'description'> = [];
  if (intent.name !== undefined) {
    patch.name = intent.name;
    changed.push('name');
  }
  if (intent.description !== undefined) {
    patch.description = intent.description;
    changed.push('description');
  }
  if (changed.length === 0) return c;
  const at = actor.timestamp();
  const updated = await patchInMailbox(actor, s, patch, at);
  await actor.publishInMailbox(s, {
    type: 'conversation.updated',
    ...eventHead(c, at, c.last_seq),
    data: { conversation: await actor.eventConversationInMailbox(s), changed, by: intent.by },
  });
  return updated;
}

/** Mailbox-only. ACTIVE <-> ARCHIVED. */
export async function setArchivedInMailbox(actor: ConversationActor, s: ActorState, archive: boolean, by: ActingPrincipal): Promise<ConversationRecord> {
  const target = archive ? 'ARCHIVED' : 'ACTIVE';
  if (s.conversation.status === target) return s.conversation;
  const at = actor.timestamp();
  const updated = await patchInMailbox(actor, s, { status: target }, at);
  await actor.publishInMailbox(s, {
    type: archive ? 'conversation.archived' : 'conversation.unarchived',
    ...eventHead(updated, at, updated.last_seq),
    data: { conversation: await actor.eventConversationInMailbox(s), by },
  });
  return updated;
}

/** Mailbox-only. Soft delete; the actor forgets its state (the conversation is gone). */
export async function softDeleteInMailbox(actor: ConversationActor, s: ActorState, by: ActingPrincipal): Promise<void> {
  const at = actor.timestamp();
  const deleted = await actor.env.store.conversations.softDelete(actor.writeInMailbox(s, at));
  if (!deleted) throw actor.goneInMailbox();
  await actor.publishInMailbox(s, {
    type: 'conversation.deleted',
    ...eventHead(deleted, at, s.conversation.last_seq),
    data: { conversation_id: deleted.conversation_id, deleted_at: deleted.deleted_at ?? at, by },
  });
  actor.forgetInMailbox();
}

/** Writes `patch` and installs the stored record, keeping our epoch (the fence just accepted it). */
async function patchInMailbox(actor: ConversationActor, s: ActorState, patch: ConversationPatch, at: string): Promise<ConversationRecord> {
  const updated = await actor.env.store.conversations.update({ patch, ...actor.writeInMailbox(s, at) });
  if (!updated) throw actor.goneInMailbox();
  s.conversation = updated;
  return updated;
}
