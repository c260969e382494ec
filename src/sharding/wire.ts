/**
 * The node-to-node wire: paths, headers, and errors in both directions.
 *
 *   POST /internal/v1/actors/<operation>        X-Chat-Cluster-Secret: <shared secret>
 *   { "args": [ ...the ActorHost method's arguments ] }
 *   200 { "result": <the method's answer, null for void> }
 *   4xx/5xx { "error": { code, message, headers, reason?, conversation_id? } }
 *
 * Errors keep what the edge renders (catalog code, message or message list, extra headers), so a
 * forwarded call fails exactly as a local one would. `reason` carries the retryable kinds the
 * router acts on: the host's fenced/draining, and the server's not_owner. Anything that is not an
 * ApiError on the owner comes back as RemoteServerError, a plain Error, so the edge renders its
 * usual server_error (with the request id) and logs it.
 */
import { ActorUnavailableError, type UnavailableReason } from '../actors/errors.ts';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../errors/catalog.ts';

export const ACTORS_PATH = '/internal/v1/actors/';
export const SECRET_HEADER = 'x-chat-cluster-secret';
export const FROM_HEADER = 'x-chat-node-id';

/**
 * Why a forwarded call could not be answered by an owner:
 *  - not_owner: the receiving node's view says another node owns the conversation;
 *  - no_owner: this node's view is empty (it left, or has not seen anyone yet);
 *  - unreachable: no connection could be made, so the request was never delivered;
 *  - timeout / ambiguous: the request left but no answer came (it may have run);
 *  - overloaded: too many calls to this peer are already waiting (backpressure, not retried).
 */
export type ForwardReason = 'not_owner' | 'no_owner' | 'unreachable' | 'timeout' | 'ambiguous' | 'overloaded';

export class ForwardUnavailableError extends ApiError {
  constructor(
    readonly reason: ForwardReason,
    readonly conversation_id: string | null,
    detail: string,
  ) {
    super('service_unavailable', `the conversation's owner cannot be reached (${detail}); retry the request`, { 'Retry-After': '1' });
    this.name = 'ForwardUnavailableError';
  }

  /** Whether the request provably did not run, so sending it again cannot repeat it. */
  get undelivered(): boolean {
    return this.reason === 'not_owner' || this.reason === 'no_owner' || this.reason === 'unreachable';
  }
}

/**
 * The channel itself refused the call (wrong secret, unknown operation, malformed or oversized
 * body): a cluster misconfiguration or version skew, never the end user's fault, so the sender
 * turns it into a RemoteServerError (500) rather than passing a 401 or 404 on to the client.
 */
export class ChannelRefusal extends ApiError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'ChannelRefusal';
  }
}

/** A failure on the owner that was not a contract error (a bug, a store failure). */
export class RemoteServerError extends Error {
  constructor(
    readonly nodeId: string,
    message: string,
  ) {
    super(`node ${nodeId}: ${message}`);
    this.name = 'RemoteServerError';
  }
}

export interface WireError {
  error: {
    code: string;
    message: string | string[];
    headers?: Record<string, string>;
    reason?: string;
    conversation_id?: string | null;
    /** Set when the channel refused the call before it reached the host (ChannelRefusal). */
    channel?: boolean;
  };
}

export function encodeError(err: unknown): { status: number; body: WireError } {
  if (err instanceof ApiError) {
    const body: WireError = { error: { code: err.code, message: err.messages, headers: { ...err.headers } } };
    if (err instanceof ActorUnavailableError || err instanceof ForwardUnavailableError) {
      body.error.reason = err.reason;
      body.error.conversation_id = err.conversation_id;
    }
    if (err instanceof ChannelRefusal) body.error.channel = true;
    return { status: err.status, body };
  }
  return { status: 500, body: { error: { code: 'server_error', message: err instanceof Error ? err.message : String(err) } } };
}

export function decodeError(status: number, value: unknown, nodeId: string): Error {
  const e = (value as Partial<WireError> | null)?.error;
  if (!e || typeof e.code !== 'string' || !(e.code in ERROR_STATUS) || e.code === 'server_error' || e.channel === true) {
    const message = e && (typeof e.message === 'string' || Array.isArray(e.message)) ? String(e.message) : `answered ${status}`;
    return new RemoteServerError(nodeId, e?.channel === true ? `refused the call (${String(e.code)}): ${message}` : message);
  }
  const code = e.code as ErrorCode;
  const conversation = typeof e.conversation_id === 'string' ? e.conversation_id : null;
  if (e.reason === 'fenced' || e.reason === 'draining') return new ActorUnavailableError(e.reason as UnavailableReason, conversation);
  if (e.reason === 'not_owner') return new ForwardUnavailableError('not_owner', conversation, `node ${nodeId} does not own it`);
  const message = Array.isArray(e.message) ? e.message.map(String) : String(e.message);
  return new ApiError(code, message, isStringRecord(e.headers) ? e.headers : {});
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'string');
}
