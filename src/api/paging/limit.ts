/**
 * Page size, as the contract says: default 50; values over 100 are capped (not refused); anything
 * that is not a positive integer (0, -1, 1.5, "abc", "", "1e2") is `invalid_limit`.
 */
import { ApiError } from '../../errors/catalog.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

/** Other bounded lists (user lookup: 10 and 20) pass their own default and maximum. */
export function pageLimit(raw: string | undefined, defaultLimit = DEFAULT_LIMIT, maxLimit = MAX_LIMIT): number {
  if (raw === undefined) return defaultLimit;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1) {
    throw new ApiError('invalid_limit', `limit must be a positive integer (got "${raw}"); values above ${maxLimit} are capped`);
  }
  return Math.min(Number(raw), maxLimit);
}
