/** Wire shapes shared by many operations. TypeBox gives the JSON Schema and the TS type at once. */
import { Type, type TSchema } from '@sinclair/typebox';

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Closed objects: a field the route does not accept is `invalid_request`. */
export const Closed = { additionalProperties: false } as const;

export const Id = Type.String({ minLength: 1, maxLength: 128 });

/**
 * The largest integer a request may carry: JSON numbers above 2^53 - 1 lose precision in
 * JavaScript, and the stores bind them as 64-bit integers. Every integer and number field of a
 * request schema has a minimum and a maximum at most this (test/request-bounds.test.ts).
 */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;
export const DateTime = Type.String({ format: 'date-time' });

export const ErrorBody = Type.Object(
  {
    status_code: Type.Integer(),
    error: Type.String(),
    message: Type.Union([Type.String(), Type.Array(Type.String())]),
    path: Type.String(),
    timestamp: DateTime,
  },
  { $id: 'ErrorBody' },
);

export const TenantParams = Type.Object({ tenant_id: Id }, Closed);
export const ApplicationParams = Type.Object({ tenant_id: Id, application_id: Id }, Closed);

/**
 * Path parameters of a conversation. Ids are not format-checked: an id the service never issued
 * is simply not found (404), not malformed.
 */
export const ConversationParams = Type.Object({ tenant_id: Id, application_id: Id, conversation_id: Id }, Closed);
export const MessageParams = Type.Object({ tenant_id: Id, application_id: Id, conversation_id: Id, message_id: Id }, Closed);
export const MemberParams = Type.Object({ tenant_id: Id, application_id: Id, conversation_id: Id, user_id: Id }, Closed);
