/**
 * Who may manage a conversation's members (the contract's add rules, which removal and our
 * update/delete routes follow): GROUP needs groups.manage, or groups.create as OWNER or ADMIN of
 * the conversation; CHANNEL needs channels.manage (a user may still join a PUBLIC channel, and
 * leave anything, themselves); DIRECT members never change. Machines are authorized by scope.
 */
import { ApiError } from '../errors/catalog.ts';
import type { AccessContext } from '../identity/access.ts';
import type { ConversationDetail } from '../store/index.ts';

export function assertMayManage(c: ConversationDetail, a: AccessContext): void {
  if (c.type === 'DIRECT') throw new ApiError('direct_conversation_immutable', 'the members of a DIRECT conversation never change');
  if (a.principal.type === 'machine' || holdsManageCapability(c, a)) return;
  if (c.type === 'GROUP') {
    if (a.capabilities.includes('groups.create') && (c.my_role === 'OWNER' || c.my_role === 'ADMIN')) return;
    throw new ApiError('missing_capability', 'missing capability: groups.manage (or groups.create as OWNER or ADMIN of the conversation)');
  }
  throw new ApiError('missing_capability', 'missing capability: channels.manage');
}

/** The capability that manages this type of conversation whoever created it: groups.manage or channels.manage. */
export function holdsManageCapability(c: { type: string }, a: AccessContext): boolean {
  if (c.type === 'GROUP') return a.capabilities.includes('groups.manage');
  if (c.type === 'CHANNEL') return a.capabilities.includes('channels.manage');
  return false;
}

export function actingOf(a: AccessContext): { user_id: string | null; client_id: string | null } {
  const p = a.principal;
  return p.type === 'user' ? { user_id: p.user_id, client_id: null } : { user_id: null, client_id: p.client_id };
}
