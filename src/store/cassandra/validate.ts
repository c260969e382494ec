/** Argument checks shared by the Cassandra stores (same rules and messages as the SQLite driver). */

export function checkEpoch(epoch: number): number {
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new RangeError(`epoch must be a non-negative integer (got ${epoch})`);
  return epoch;
}

export function checkPreview(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > 1000) throw new RangeError(`members preview must be an integer from 0 to 1000 (got ${n})`);
}

export const CONVERSATION_TYPES: ReadonlySet<string> = new Set(['DIRECT', 'GROUP', 'CHANNEL']);
export const MESSAGE_TYPES: ReadonlySet<string> = new Set(['TEXT', 'SYSTEM', 'FILE']);
