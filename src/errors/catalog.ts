/**
 * The one error catalog. Every error code the service can answer with, and its HTTP status.
 * Handlers throw `ApiError`; only the edge (src/http/respond.ts) renders the contract's error body.
 *
 * Codes whose status the contract leaves `not shown` are decided here and documented in
 * docs/errors.md; codes the contract does not list at all (method_not_allowed,
 * unsupported_media_type, uri_too_long, header_fields_too_large, service_unavailable, ...) are
 * additions, which the versioning rules allow.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_cursor: 400,
  invalid_limit: 400,
  body_too_long: 400,
  too_many_attachments: 400,
  query_too_short: 400,
  query_too_long: 400,
  invalid_json: 400,
  invalid_redirect_uri: 400,
  invalid_grant: 400,
  invalid_token: 401,
  token_revoked: 401,
  invalid_id_token: 401,
  not_tenant_member: 403,
  no_application_access: 403,
  tenant_not_available: 403,
  insufficient_scope: 403,
  client_context_mismatch: 403,
  missing_capability: 403,
  principal_not_allowed: 403,
  user_required: 403,
  not_conversation_member: 403,
  system_message_not_allowed: 403,
  chat_access_not_granted: 403,
  application_not_found: 404,
  not_found: 404,
  role_not_found: 404,
  method_not_allowed: 405,
  role_locked: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  conversation_archived: 422,
  invalid_reply: 422,
  actor_not_member: 422,
  target_user_not_eligible: 422,
  direct_conversation_immutable: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  header_fields_too_large: 431,
  server_error: 500,
  identity_unavailable: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** A contract error. `message` is a sentence, or the list of every validation problem. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly messages: string | string[];
  /** Extra response headers (Retry-After, Allow, ...). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string | string[], headers: Record<string, string> = {}) {
    // A contract error is an expected answer, not a bug: skip the stack trace, which costs more
    // than the rest of an error response (a flood of 401s must stay cheap).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(Array.isArray(message) ? message.join('; ') : message);
    Error.stackTraceLimit = limit;
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.messages = message;
    this.headers = headers;
  }
}

/**
 * The answer for a store that cannot serve now (store/errors.ts StoreUnavailableError: Cassandra
 * without a quorum, a timeout): 503 `service_unavailable`, retryable after Retry-After.
 */
export function storeUnavailable(): ApiError {
  return new ApiError('service_unavailable', 'the message store cannot be reached right now; retry the request', { 'Retry-After': '1' });
}

export interface ErrorBody {
  status_code: number;
  error: string;
  message: string | string[];
  path: string;
  timestamp: string;
}

export function errorBody(err: ApiError, path: string, now: Date = new Date()): ErrorBody {
  return {
    status_code: err.status,
    error: err.code,
    message: err.messages,
    path,
    timestamp: now.toISOString(),
  };
}
