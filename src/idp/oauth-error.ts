/**
 * OAuth error responses (RFC 6749 §5.2, RFC 7009, RFC 8693, RFC 8707): body
 * `{error, error_description}`, never cached. The IdP is its own service, so it speaks OAuth's
 * error format, not the chat API's error body.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'chat_access_not_granted'
  // The authorization endpoint (RFC 6749 §4.1.2.1): shown to the user, never redirected.
  | 'invalid_redirect_uri'
  | 'unsupported_response_type'
  // Not OAuth codes, used by the IdP's other endpoints with the same body shape.
  | 'invalid_token'
  | 'not_found'
  | 'tenant_not_found'
  | 'user_not_found'
  | 'application_not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'server_error';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  chat_access_not_granted: 403,
  invalid_redirect_uri: 400,
  unsupported_response_type: 400,
  invalid_token: 401,
  not_found: 404,
  tenant_not_found: 404,
  user_not_found: 404,
  application_not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  server_error: 500,
};

/** RFC 6749 §5.2: a failed client authentication answers 401 with a challenge. */
const CHALLENGE: Partial<Record<OAuthErrorCode, string>> = {
  invalid_client: 'Basic realm="idp", charset="UTF-8"',
  invalid_token: 'Bearer realm="idp-directory"',
};

export class OAuthError extends Error {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    headers: Record<string, string> = {},
  ) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
    this.status = STATUS[code];
    const challenge = CHALLENGE[code];
    this.headers = challenge === undefined ? headers : { 'www-authenticate': challenge, ...headers };
  }
}
