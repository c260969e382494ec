/**
 * Errors the actor layer throws. Contract conditions are ApiError with the catalog's codes
 * (src/errors/catalog.ts), so a route handler lets them through untouched; the one condition the
 * contract does not name, "this node does not own the conversation (any more)", is
 * ActorUnavailableError: a 503 `service_unavailable` that the cluster's forwarding layer
 * recognises as retryable (`retryable: true`) and retries against the current owner.
 */
import { ApiError } from '../errors/catalog.ts';

export type UnavailableReason =
  /** Another actor claimed the conversation (a higher epoch): this one stopped acting as owner. */
  | 'fenced'
  /** The host is draining for shutdown and takes no new work. */
  | 'draining';

export class ActorUnavailableError extends ApiError {
  readonly retryable = true as const;

  constructor(
    readonly reason: UnavailableReason,
    readonly conversation_id: string | null,
  ) {
    super(
      'service_unavailable',
      reason === 'fenced' ? 'the conversation is being moved to another owner; retry the request' : 'this node is shutting down; retry the request',
      { 'Retry-After': '1' },
    );
    this.name = 'ActorUnavailableError';
  }
}

export function conversationNotFound(): ApiError {
  return new ApiError('not_found', 'conversation not found');
}

export function messageNotFound(): ApiError {
  return new ApiError('not_found', 'message not found');
}

export function memberNotFound(): ApiError {
  return new ApiError('not_found', 'member not found');
}

export function archived(): ApiError {
  return new ApiError('conversation_archived', 'the conversation is archived and read-only');
}

export function directImmutable(): ApiError {
  return new ApiError('direct_conversation_immutable', 'the members of a DIRECT conversation never change');
}
