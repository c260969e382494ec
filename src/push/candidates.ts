/**
 * Who a new message may push to (the contract's Web push section, steps 1-2):
 *  - DIRECT and GROUP: every ACTIVE member except the sender;
 *  - CHANNEL: only the users the message mentions, still ACTIVE members, except the sender.
 * Step 3 (dropping users online) is the worker's, with the presence port.
 */
import type { ChatStore, ConversationRecord, ConversationRef, MemberPosition, MessageView } from '../store/index.ts';

const PAGE = 1000;

export async function pushCandidates(store: ChatStore, ref: ConversationRef, conversation: ConversationRecord, message: MessageView): Promise<string[]> {
  let users: string[];
  if (conversation.type === 'CHANNEL') {
    users = message.mentioned_user_ids.length === 0 ? [] : await store.members.filterActive(ref, message.mentioned_user_ids);
  } else {
    users = [];
    let after: MemberPosition | null = null;
    do {
      const page = await store.members.list({ limit: PAGE, after, ...ref });
      if (page === null) return [];
      for (const m of page.items) if (m.status === 'ACTIVE') users.push(m.user_id);
      after = page.next;
    } while (after !== null);
  }
  return [...new Set(users)].filter((u) => u !== message.sender_user_id);
}
