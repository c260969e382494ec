/**
 * Who may see one conversation: machines see every conversation of their context; a user sees
 * the conversations they are an ACTIVE member of, and PUBLIC channels. A conversation of another
 * tenant or application, or a deleted one, is `not_found` (never someone else's data); one the
 * user may not see is `not_conversation_member`.
 */
import { ApiError } from '../errors/catalog.ts';
import type { AccessContext } from '../identity/access.ts';
import { InvalidPositionError, type ConversationDetail, type ConversationGate, type ConversationGist, type Viewer } from '../store/index.ts';
import type { Services } from './services.ts';
import type { CursorKind } from './paging/cursor.ts';
import { pageLimit } from './paging/limit.ts';
import type { Page } from '../store/index.ts';
import { MEMBERS_PREVIEW } from './wire.ts';

export interface ConversationParams {
  tenant_id: string;
  application_id: string;
  conversation_id: string;
}

export function viewerOf(access: AccessContext | null): Viewer {
  const p = access?.principal;
  return p?.type === 'user' ? { kind: 'user', user_id: p.user_id } : { kind: 'machine' };
}

export function isPublicChannel(c: { type: string; visibility: string | null }): boolean {
  return c.type === 'CHANNEL' && c.visibility === 'PUBLIC';
}

export async function visibleConversation(services: Services, access: AccessContext | null, params: ConversationParams): Promise<ConversationDetail> {
  const viewer = viewerOf(access);
  const c = await services.store.conversations.get(params, viewer, MEMBERS_PREVIEW);
  if (c === null) throw new ApiError('not_found', `conversation ${params.conversation_id} not found`);
  if (viewer.kind === 'user' && c.my_role === null && !isPublicChannel(c)) {
    throw new ApiError('not_conversation_member', 'you are not a member of this conversation');
  }
  return c;
}

/**
 * The same rule as visibleConversation, for reads that do not show the conversation itself
 * (history, members): one primary-key read (the store's gate), no unread count or member
 * preview. Answers the conversation, whose `revision` validates cached history pages.
 */
export async function assertReadable(services: Services, access: AccessContext | null, params: ConversationParams): Promise<ConversationGist> {
  const viewer = viewerOf(access);
  return readableBy(viewer, params, await services.store.conversations.gate(params, viewer.kind === 'user' ? viewer.user_id : null));
}

/** The rule of assertReadable on a gate answer already read. */
export function readableBy(viewer: Viewer, params: ConversationParams, gate: ConversationGate | null): ConversationGist {
  if (gate === null) throw new ApiError('not_found', `conversation ${params.conversation_id} not found`);
  if (viewer.kind === 'user' && gate.member_status !== 'ACTIVE' && !isPublicChannel(gate.conversation)) {
    throw new ApiError('not_conversation_member', 'you are not a member of this conversation');
  }
  return gate.conversation;
}

/** Decodes a `before` cursor into a store position (null when absent). */
export function positionFrom(services: Services, kind: CursorKind, scope: string, before: string | undefined): unknown {
  return before === undefined ? null : services.cursors.decode(kind, scope, before);
}

/** Runs a store page read, mapping a position the store refuses to `invalid_cursor`. */
export async function storePage<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof InvalidPositionError) throw new ApiError('invalid_cursor', 'the cursor was not issued by this service for this list');
    throw err;
  }
}

/**
 * One page of a list inside a conversation (history, members): access check, limit, cursor in,
 * store read, cursor out. `read` answers null when the conversation vanished meanwhile.
 */
export async function conversationPage<T, P, W>(
  services: Services,
  access: AccessContext | null,
  params: ConversationParams,
  kind: CursorKind,
  query: { before?: string; limit?: string },
  read: (limit: number, after: P | null) => Promise<Page<T, P> | null>,
  wire: (item: T) => W,
): Promise<{ items: W[]; next_cursor: string | null }> {
  const limit = pageLimit(query.limit);
  await assertReadable(services, access, params);
  const after = positionFrom(services, kind, params.conversation_id, query.before) as P | null;
  const res = await storePage(() => read(limit, after));
  if (res === null) throw new ApiError('not_found', `conversation ${params.conversation_id} not found`);
  return { items: res.items.map(wire), next_cursor: res.next ? services.cursors.encode(kind, params.conversation_id, res.next) : null };
}
