/** Reading conversations, their history and their members. Reads go straight to the store. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { ConversationPosition, MemberPosition, MessagePosition } from '../../store/index.ts';
import { conversationPage, positionFrom, storePage, viewerOf, visibleConversation } from '../conversation-access.ts';
import { pageLimit } from '../paging/limit.ts';
import { defineRoute } from '../route.ts';
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
  handler({ params, query, access, services }): Promise<Static<typeof MessagePage>> {
    const viewer = viewerOf(access);
    const viewer_user_id = viewer.kind === 'user' ? viewer.user_id : null;
    return conversationPage(services, access, params, 'messages', query, (limit, after: MessagePosition | null) => services.store.messages.list({ ...params, viewer_user_id, limit, after }), messageWire);
  },
});

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
    return conversationPage(services, access, params, 'members', query, (limit, after: MemberPosition | null) => services.store.members.list({ ...params, limit, after }), memberWire);
  },

});
