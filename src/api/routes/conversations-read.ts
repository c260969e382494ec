/** Reading conversations, their history and their members. Reads go straight to the store. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { ConversationGist, ConversationPosition, MemberPosition, MessagePosition } from '../../store/index.ts';
import { ApiError } from '../../errors/catalog.ts';
import { assertReadable, conversationPage, positionFrom, readableBy, storePage, viewerOf, visibleConversation, type ConversationParams as ConversationRefParams } from '../conversation-access.ts';
import { pageLimit } from '../paging/limit.ts';
import { defineRoute, RawJson } from '../route.ts';
import type { Services } from '../services.ts';
import { Conversation, ConversationType, Member, Message, page } from '../schemas/chat.ts';
import { ApplicationParams, Closed, ConversationParams } from '../schemas/common.ts';
import { conversationWire, memberWire, messageWire, MEMBERS_PREVIEW } from '../wire.ts';

const Paging = { before: Type.Optional(Type.String({ description: 'next_cursor of the previous page' })), limit: Type.Optional(Type.String({ description: 'page size, default 50, at most 100 (larger values are capped)' })) };
const ConversationPage = page(Conversation);
const MessagePage = page(Message);
const MemberPage = page(Member);
const common = { audience: ['user', 'machine'] as ('user' | 'machine')[], context: 'application' as const, cors: 'application' as const, status: 200 as const };

export const listConversations = defineRoute({
  ...common,
  operationId: 'listConversations',
  summary: 'Conversations of the context, most recently active first',
  description:
    'Users: conversations they are an active member of, plus PUBLIC channels. Machines: every conversation of the context. Ties on last_activity_at are ordered by conversation_id, so paging is stable.',
  tag: 'Conversations',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations',
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:conversations.read'] },
  capabilities: { all: ['conversations.read'] },
  schemas: { params: ApplicationParams, query: Type.Object({ type: Type.Optional(ConversationType), ...Paging }, Closed), response: ConversationPage },
  errors: ['invalid_cursor', 'invalid_limit'],
  async handler({ params, query, access, services }): Promise<Static<typeof ConversationPage>> {
    const limit = pageLimit(query.limit);
    const viewer = viewerOf(access);
    const scope = `${params.tenant_id}|${params.application_id}|${viewer.kind === 'user' ? `u:${viewer.user_id}` : 'm'}|${query.type ?? ''}`;
    const after = positionFrom(services, 'conversations', scope, query.before) as ConversationPosition | null;
    const res = await storePage(() =>
      services.store.conversations.list({ tenant_id: params.tenant_id, application_id: params.application_id, viewer, type: query.type, limit, after, members_preview: MEMBERS_PREVIEW }),
    );
    return {
      items: res.items.map((c) => conversationWire(c, viewer.kind === 'user')),
      next_cursor: res.next ? services.cursors.encode('conversations', scope, res.next) : null,
    };
  },
});

export const getConversation = defineRoute({
  ...common,
  operationId: 'getConversation',
  summary: 'One conversation, with the caller’s role and exact unread count',
  tag: 'Conversations',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}',
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:conversations.read'] },
  capabilities: { all: ['conversations.read'] },
  schemas: { params: ConversationParams, query: Type.Object({}, Closed), response: Conversation },
  errors: ['not_found', 'not_conversation_member'],
  async handler({ params, access, services }): Promise<Static<typeof Conversation>> {
    const c = await visibleConversation(services, access, params);
    return conversationWire(c, access?.principal.type === 'user');
  },
});

export const listMessages = defineRoute({
  ...common,
  operationId: 'listMessages',
  summary: 'History of a conversation, newest first; deleted messages appear as tombstones',
  tag: 'Messages',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages',
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:messages.read'] },
  capabilities: { all: ['messages.read'] },
  schemas: { params: ConversationParams, query: Type.Object(Paging, Closed), response: MessagePage },
  errors: ['invalid_cursor', 'invalid_limit', 'not_found', 'not_conversation_member'],
  handler({ params, query, access, services }): RawJson | Promise<RawJson> {
    // Served from the node's page cache when the conversation's revision has not moved
    // (api/page-cache.ts); built, serialized once and kept otherwise. Where the store answers
    // the access check synchronously (SQLite), a cached page is answered without any promise.
    const viewer = viewerOf(access);
    const viewer_user_id = viewer.kind === 'user' ? viewer.user_id : null;
    const limit = pageLimit(query.limit);
    const key = `${params.conversation_id}|${limit}|${query.before ?? ''}`;
    const serve = (conversation: ConversationGist): RawJson | Promise<RawJson> => {
      const cached = services.pages.get(key, conversation.revision, viewer_user_id ?? '');
      return cached !== undefined ? new RawJson(cached) : buildHistoryPage(services, params, viewer_user_id, limit, query.before, key, conversation);
    };
    const conversations = services.store.conversations;
    if (conversations.gateSync !== undefined) return serve(readableBy(viewer, params, conversations.gateSync(params, viewer_user_id)));
    return assertReadable(services, access, params).then(serve);
  },
});

/** A history page read from the store, serialized once and kept in the page cache under `key`. */
async function buildHistoryPage(
  services: Services,
  params: ConversationRefParams,
  viewer_user_id: string | null,
  limit: number,
  before: string | undefined,
  key: string,
  conversation: ConversationGist,
): Promise<RawJson> {
  const after = positionFrom(services, 'messages', params.conversation_id, before) as MessagePosition | null;
  const res = await storePage(() => services.store.messages.list({ viewer_user_id, limit, after, ...params }));
  if (res === null) throw new ApiError('not_found', `conversation ${params.conversation_id} not found`);
  const body: Static<typeof MessagePage> = { items: res.items.map(messageWire), next_cursor: res.next ? services.cursors.encode('messages', params.conversation_id, res.next) : null };
  const bytes = Buffer.from(JSON.stringify(body));
  // The revision read before the page: a write that landed in between makes the entry stale
  // at the next read (its revision moved), never a newer page under an older revision.
  services.pages.set(key, conversation.revision, viewer_user_id ?? '', bytes, res.items.some((m) => m.reactions.length > 0));
  return new RawJson(bytes);
}

export const listMembers = defineRoute({
  ...common,
  operationId: 'listMembers',
  summary: 'Active members of a conversation, in joining order',
  tag: 'Members',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members',
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:members.read', 'chat:conversations.read'] },
  capabilities: { all: ['conversations.read'] },
  schemas: { params: ConversationParams, query: Type.Object(Paging, Closed), response: MemberPage },
  errors: ['invalid_cursor', 'invalid_limit', 'not_found', 'not_conversation_member'],
  handler({ params, query, access, services }): Promise<Static<typeof MemberPage>> {
    return conversationPage(services, access, params, 'members', query, (limit, after: MemberPosition | null) => services.store.members.list({ limit, after, ...params }), memberWire);
  },

});
