/**
 * Request framing, read in the uWS callback before routing: what the request says about its body,
 * and the refusals that come before anything else.
 *
 * - Content-Length: uWebSockets (this build) frames a body by the first Content-Length header and
 *   ignores any other. Two headers with different values desynchronize the connection: the first
 *   one smaller, the rest of the body is parsed as a next request (request smuggling behind a load
 *   balancer that framed it by the other header); the first one larger, the connection waits for
 *   bytes that never come. RFC 9112 §6.3: the message is invalid, answer 400 and close. Repeats of
 *   one value are that value (RFC 9110 §8.6). Looking for a second header walks every header, so
 *   only requests that carry a Content-Length pay it; GETs without a body read two headers.
 * - Transfer-Encoding: uWS itself closes a request that has it together with Content-Length, and
 *   treats any Transfer-Encoding as chunked; so do we.
 * - The request target (path and query): at most `maxTarget` bytes, else 414 `uri_too_long`, so a
 *   huge URL costs no routing, no query parsing and no echo of itself in an error body.
 *
 * What uWS refuses without calling any handler (docs/http.md "Limits of a bare node"): more than
 * 48 header fields, a control character or a character outside [A-Za-z0-9-] in a header name, a
 * header section longer than the build's limit when it arrives in more than one read, HTTP/1.0, a
 * request without Host. Those connections are closed or held unanswered; the load balancer in
 * front answers them (cluster/lib/haproxy.ts).
 */
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { ApiError } from '../errors/catalog.ts';
import { answerAndClose } from './linger.ts';
import { sendError, type Exchange } from './respond.ts';

/** What the request's headers say about its body. */
export interface Framing {
  /** Declared Content-Length in bytes; -1 when there is none. */
  readonly length: number;
  /** Transfer-Encoding present: a body of unknown length. */
  readonly chunked: boolean;
}

/** Most requests: no body (shared, so reading the framing allocates nothing). */
export const NO_BODY: Framing = Object.freeze({ length: -1, chunked: false });

/** The request target (path + query) of the JSON API, at most: ids are at most 128 characters. */
export const MAX_API_TARGET_BYTES = 8192;

/** True when the request carries a body (or says it does). */
export const hasBody = (f: Framing): boolean => f.chunked || f.length > 0;

/** Header names as bytes: uWS.js converts a string key to UTF-8 at every call. */
const TRANSFER_ENCODING = Buffer.from('transfer-encoding');
const CONTENT_LENGTH = Buffer.from('content-length');

/** The walk over a request's headers, without a closure per request (the callback runs synchronously). */
let firstLength = '';
let conflict = false;
const visitHeader = (key: string, value: string): void => {
  if (key === 'content-length' && value !== firstLength) conflict = true;
};

/** Reads the framing headers (before any await: uWS frees the request after the callback). */
export function readFraming(req: HttpRequest): Framing | ApiError {
  const te = req.getHeader(TRANSFER_ENCODING);
  const cl = req.getHeader(CONTENT_LENGTH);
  if (cl === '') return te === '' ? NO_BODY : { length: -1, chunked: true };
  firstLength = cl;
  conflict = false;
  req.forEach(visitHeader);
  if (conflict) return new ApiError('invalid_request', 'the request has Content-Length headers with different values');
  // uWS closes the connection after this callback for a value that is not 1 to 9 digits: this
  // answer would not be sent, but nothing else runs either.
  if (!/^\d{1,9}$/.test(cl)) return new ApiError('invalid_request', 'Content-Length must be a number of bytes');
  return { length: Number(cl), chunked: te !== '' };
}

/** 414 for a request target over `max` bytes (`url` is the path, `query` what follows `?`). */
export function targetTooLong(url: string, query: string, max: number): ApiError | null {
  if (url.length + query.length < max) return null;
  return new ApiError('uri_too_long', `the request target (path and query) exceeds ${max} bytes`);
}

/** The path to put in an error body: a refused request target is not echoed back in full. */
export function shownPath(url: string, max: number): string {
  return url.length <= max ? url : `${url.slice(0, 256)}...`;
}

/**
 * For plain uWS handlers (health, the catch-all 404): answers a request whose framing is invalid
 * (and closes, see linger.ts) or whose target is too long; true when it did. Headers the caller
 * reads must be read before: uWS frees the request once an answer is written.
 */
export function refuseMalformed(res: HttpResponse, req: HttpRequest, maxTarget = MAX_API_TARGET_BYTES): boolean {
  const url = req.getUrl();
  const framing = readFraming(req);
  const ex: Exchange = { res, aborted: false, done: false, headers: {}, status: 0, inCallback: true };
  if (framing instanceof ApiError) {
    answerAndClose(ex, framing, shownPath(url, maxTarget));
    return true;
  }
  const tooLong = targetTooLong(url, req.getQuery() ?? '', maxTarget);
  if (tooLong === null) return false;
  sendError(ex, tooLong, shownPath(url, maxTarget));
  return true;
}
