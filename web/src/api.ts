/** The typed API client bound to the signed-in session (relative base: the node's own origin). */
import { createChatClient, type ChatClient } from '../../client/index.ts';
import type { SessionKeeper } from './auth.ts';

export function apiFor(keeper: SessionKeeper): ChatClient {
  return createChatClient({ baseUrl: '/api/v1', token: () => keeper.token() });
}

/** A message for a person from any failure: the contract's code decides, never the text. */
export function describeError(err: unknown): string {
  const e = err as { code?: string; body?: { message?: string | string[] } };
  switch (e.code) {
    case 'missing_capability':
      return `You are not allowed to do this here (${String(e.body?.message ?? '')}).`;
    case 'rate_limited':
      return 'Slow down: too many requests. Try again in a few seconds.';
    case 'not_conversation_member':
      return 'You are not a member of this conversation.';
    case 'conversation_archived':
      return 'This conversation is archived: it is read-only.';
    case 'body_too_long':
      return 'The message is too long (10,000 characters at most).';
    case 'identity_unavailable':
      return 'The identity provider cannot be reached. Try again shortly.';
    case 'invalid_grant':
      return 'The sign-in could not be completed (the code was refused). Sign in again.';
    case 'invalid_redirect_uri':
      return 'The sign-in was sent to an address this app does not own.';
    case 'chat_access_not_granted':
      return 'This account may not use chat.';
    case 'invalid_id_token':
      return 'Your sign-in has ended. Sign in again.';
    case undefined:
      return err instanceof Error ? err.message : 'Something went wrong.';
    default:
      return `${Array.isArray(e.body?.message) ? e.body.message.join('; ') : String(e.body?.message ?? e.code)} (${e.code})`;
  }
}
