/**
 * The conversation actor layer: what route handlers, the SSE hub and the push worker import.
 * See conversation-actor.ts for the mailbox and its guarantees, docs/actors.md and
 * docs/events.md for the design.
 */
export { ActorHost, type ActorHostOptions } from './actor-host.ts';
export { ActorUnavailableError, type UnavailableReason } from './errors.ts';
export { CHAT_EVENT_TYPES, toChatEvent, type ChatBus, type ChatEvent, type ChatEventBody, type ChatEventType, type PushJob } from './events.ts';
export { channelsFor } from './fanout.ts';
export { eventConversation, eventMember, eventMessage, type EventConversation, type EventMember, type EventMessage, type EventReaction } from './wire.ts';
export type * from './types.ts';
