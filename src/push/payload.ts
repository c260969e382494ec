/**
 * The Push notification document of the contract, built from a stored message:
 *   notification.title  the sender's display name (falling back to the user id); for a message
 *                       without sender, the conversation name; if that is missing, `New message`
 *   notification.body   the first 200 characters of the text, `…` appended when longer; the
 *                       attachment word when the message has no text (empty or blank)
 *   data                exactly tenant_id, application_id, conversation_id, message_id: the text
 *                       is never in data (the service worker may log or forward it)
 * Characters are Unicode code points, so a preview never splits a surrogate pair.
 */
import type { ConversationRecord, MessageView } from '../store/index.ts';

export const PREVIEW_CHARS = 200;
export const ELLIPSIS = '…';
export const ATTACHMENT_WORD = 'Attachment';
export const FALLBACK_TITLE = 'New message';

export interface PushDocument {
  notification: { title: string; body: string };
  data: { tenant_id: string; application_id: string; conversation_id: string; message_id: string };
}

export function pushTitle(message: MessageView, conversation: Pick<ConversationRecord, 'name'>): string {
  if (message.sender_user_id !== null) {
    const name = message.sender?.display_name;
    return name !== null && name !== undefined && name !== '' ? name : message.sender_user_id;
  }
  return conversation.name !== null && conversation.name !== '' ? conversation.name : FALLBACK_TITLE;
}

export function pushBody(message: Pick<MessageView, 'body' | 'attachments'>): string {
  if (message.body.trim() === '') return message.attachments.length > 0 ? ATTACHMENT_WORD : '';
  const chars = Array.from(message.body);
  return chars.length > PREVIEW_CHARS ? chars.slice(0, PREVIEW_CHARS).join('') + ELLIPSIS : message.body;
}

export function pushDocument(message: MessageView, conversation: ConversationRecord): PushDocument {
  return {
    notification: { title: pushTitle(message, conversation), body: pushBody(message) },
    data: {
      tenant_id: message.tenant_id,
      application_id: message.application_id,
      conversation_id: message.conversation_id,
      message_id: message.message_id,
    },
  };
}
