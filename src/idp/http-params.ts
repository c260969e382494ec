/**
 * Request parameters of the OAuth and development endpoints. OAuth clients send
 * `application/x-www-form-urlencoded` (RFC 6749); JSON objects of strings are accepted too, for
 * convenience in scripts. Malformed input is an `invalid_request`, never a crash.
 */
import type { OAuthParams } from './dev-idp-clients.ts';
import type { IdpHttpRequest } from './http-types.ts';
import { OAuthError } from './oauth-error.ts';

export function bodyParams(req: IdpHttpRequest): OAuthParams {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (req.body.length === 0) return new Map();
  if (type === 'application/x-www-form-urlencoded') return formParams(req.body.toString('utf8'));
  if (type === 'application/json') return jsonParams(req.body.toString('utf8'));
  throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded or application/json');
}

function formParams(text: string): OAuthParams {
  const params = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    // RFC 6749 §3.1: parameters must not be included more than once.
    if (params.has(key)) throw new OAuthError('invalid_request', `parameter ${key} is given more than once`);
    // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
    if (value !== '') params.set(key, value);
  }
  return params;
}

function jsonParams(text: string): OAuthParams {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new OAuthError('invalid_request', 'the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OAuthError('invalid_request', 'the JSON body must be an object');
  }
  const params = new Map<string, string>();
  for (const [key, v] of Object.entries(value)) {
    if (v === null || v === '') continue;
    if (typeof v === 'string') params.set(key, v);
    else if (typeof v === 'number' || typeof v === 'boolean') params.set(key, String(v));
    else throw new OAuthError('invalid_request', `parameter ${key} must be a string`);
  }
  return params;
}

/** One decoded path segment; `invalid_request` on broken percent-encoding. */
export function pathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new OAuthError('invalid_request', 'malformed percent-encoding in the path');
  }
}
