/**
 * Channel names of the chat service. The bus treats a channel as an opaque string; these are the
 * only two kinds the service publishes to (see docs/events.md for who receives what):
 *
 *   user:{tenant_id}:{user_id}                                  a user's own channel
 *   conversation:{tenant_id}:{application_id}:{conversation_id} one CHANNEL conversation
 *
 * A user's channel is per tenant, not per application: one stream credential covers what the
 * user may see, and the events carry `application_id`, so the stream filters by application
 * (a user of two applications of one tenant then needs one subscription, not two).
 *
 * Ids are opaque strings from the identity provider and may contain `:`; each part is
 * percent-encoded, so distinct (tenant, user) pairs never share a channel name.
 */

const enc = encodeURIComponent;

export function userChannel(tenant_id: string, user_id: string): string {
  return `user:${enc(tenant_id)}:${enc(user_id)}`;
}

export function conversationChannel(tenant_id: string, application_id: string, conversation_id: string): string {
  return `conversation:${enc(tenant_id)}:${enc(application_id)}:${enc(conversation_id)}`;
}

export type ParsedChannel =
  | { kind: 'user'; tenant_id: string; user_id: string }
  | { kind: 'conversation'; tenant_id: string; application_id: string; conversation_id: string };

/** The parts of a channel name, or null when it is not one of ours (or not encoded as ours). */
export function parseChannel(channel: string): ParsedChannel | null {
  const parts = channel.split(':');
  try {
    if (parts[0] === 'user' && parts.length === 3) {
      return { kind: 'user', tenant_id: decodeURIComponent(parts[1]!), user_id: decodeURIComponent(parts[2]!) };
    }
    if (parts[0] === 'conversation' && parts.length === 4) {
      return {
        kind: 'conversation',
        tenant_id: decodeURIComponent(parts[1]!),
        application_id: decodeURIComponent(parts[2]!),
        conversation_id: decodeURIComponent(parts[3]!),
      };
    }
  } catch {
    return null; // malformed percent-encoding
  }
  return null;
}
