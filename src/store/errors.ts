/**
 * Typed store errors. "Not found" is never an error (methods answer null); these are the
 * conditions a caller must tell apart. Every driver throws exactly these classes, so callers
 * branch with `instanceof` or on `code`, never on a driver's own error text.
 *
 * Caller bugs (a limit out of range, a DIRECT conversation without two distinct users) are
 * `RangeError`, as in the rate-limit port: they are not conditions to handle, but to fix.
 */

export type StoreErrorCode = 'stale_epoch' | 'seq_conflict' | 'id_conflict' | 'invalid_position' | 'store_closed';

export abstract class StoreError extends Error {
  abstract readonly code: StoreErrorCode;
}

/**
 * Fencing: the write carried an epoch lower than the conversation's stored epoch, so another
 * actor has claimed the conversation since. Nothing was written. The sender must stop acting as
 * owner (passivate) and let the request be routed to the current owner.
 */
export class StaleEpochError extends StoreError {
  readonly code = 'stale_epoch' as const;
  constructor(
    readonly conversation_id: string,
    readonly given_epoch: number,
    readonly current_epoch: number,
  ) {
    super(`conversation ${conversation_id}: epoch ${given_epoch} is stale (current ${current_epoch})`);
    this.name = 'StaleEpochError';
  }
}

/**
 * Another message already holds this seq in the conversation. With fencing this means the
 * actor's view of `last_seq` is wrong (it must reload); nothing was written.
 */
export class SeqConflictError extends StoreError {
  readonly code = 'seq_conflict' as const;
  constructor(
    readonly conversation_id: string,
    readonly seq: number,
  ) {
    super(`conversation ${conversation_id}: seq ${seq} is already taken`);
    this.name = 'SeqConflictError';
  }
}

/**
 * A caller-generated id (conversation, message) is already used by a different resource: a
 * different context, conversation or type. A retry of the same write is not a conflict (it
 * answers the existing record), so this signals an id collision or a bug.
 */
export class IdConflictError extends StoreError {
  readonly code = 'id_conflict' as const;
  constructor(
    readonly kind: 'conversation' | 'message',
    readonly id: string,
  ) {
    super(`${kind} id ${id} is already used by another ${kind}`);
    this.name = 'IdConflictError';
  }
}

/** A page position of the wrong shape; the API maps it to `invalid_cursor`. */
export class InvalidPositionError extends StoreError {
  readonly code = 'invalid_position' as const;
  constructor(detail: string) {
    super(`invalid page position: ${detail}`);
    this.name = 'InvalidPositionError';
  }
}

export class StoreClosedError extends StoreError {
  readonly code = 'store_closed' as const;
  constructor() {
    super('the store is closed');
    this.name = 'StoreClosedError';
  }
}
