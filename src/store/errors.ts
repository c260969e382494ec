/**
 * Typed store errors. "Not found" is never an error (methods answer null); these are the
 * conditions a caller must tell apart. Every driver throws exactly these classes, so callers
 * branch with `instanceof` or on `code`, never on a driver's own error text.
 *
 * Caller bugs (a limit out of range, a DIRECT conversation without two distinct users) are
 * `RangeError`, as in the rate-limit port: they are not conditions to handle, but to fix.
 */

export type StoreErrorCode = 'stale_epoch' | 'seq_conflict' | 'id_conflict' | 'invalid_position' | 'store_closed' | 'schema_too_new' | 'store_unavailable';

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

/**
 * The store's servers cannot serve the request right now at the consistency it needs (Cassandra:
 * too few replicas up for a quorum, a replica timed out, no host reachable, a node overloaded or
 * bootstrapping). Retryable: the API answers 503 `service_unavailable` with Retry-After. A write
 * that failed so may still have been applied (a timeout's outcome is unknown): a retry must be
 * idempotent (same ids), as every store write is.
 */
export class StoreUnavailableError extends StoreError {
  readonly code = 'store_unavailable' as const;
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`the store cannot be reached: ${detail}`, options);
    this.name = 'StoreUnavailableError';
  }
}

export class StoreClosedError extends StoreError {
  readonly code = 'store_closed' as const;
  constructor() {
    super('the store is closed');
    this.name = 'StoreClosedError';
  }
}

/**
 * The database was migrated by a newer release than this one: running on a schema the code was
 * not written for corrupts data quietly, so the store refuses to open (a node refuses to start).
 */
export class SchemaTooNewError extends StoreError {
  readonly code = 'schema_too_new' as const;
  constructor(
    readonly where: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(`${where} has schema version ${found}, newer than the ${known} this release knows: run the newer release, or use another ${where.split(' ')[0]}`);
    this.name = 'SchemaTooNewError';
  }
}
