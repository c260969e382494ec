/**
 * The connect-time membership check of a stream (StreamDeps.readable): of the conversations a
 * credential names, those the user may still read. One read for the user's CHANNEL memberships,
 * and one gate read for each other conversation (at most the one PUBLIC channel being viewed).
 */
import type { ChatStore } from '../store/index.ts';
import type { RealtimeGrant } from './credential.ts';

export function readableConversations(store: ChatStore): (grant: RealtimeGrant, conversation_ids: string[]) => Promise<ReadonlySet<string>> {
  return async (grant, conversation_ids) => {
    const ctx = { tenant_id: grant.tenant_id, application_id: grant.application_id };
    const member = new Set(await store.members.conversationIdsOf(ctx, grant.user_id, 'CHANNEL'));
    const out = new Set<string>();
    for (const id of conversation_ids) {
      if (member.has(id)) {
        out.add(id);
        continue;
      }
      const gate = await store.conversations.gate({ conversation_id: id, ...ctx }, grant.user_id);
      const c = gate?.conversation;
      if (gate && (gate.member_status === 'ACTIVE' || (c?.type === 'CHANNEL' && c.visibility === 'PUBLIC'))) out.add(id);
    }
    return out;
  };
}
