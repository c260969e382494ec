/**
 * Retry-After and the work queue's retry policy for push jobs.
 *
 * A push service that answers 429 or 5xx may say how long to wait (RFC 9110 §10.2.3: delay
 * seconds or an HTTP date). The sender puts it on the RetryablePushError; the bus asks its
 * RetryPolicy for the delay before the next attempt with that error, and `pushRetryPolicy`
 * answers at least the asked delay (and never less than the default backoff). A wait longer than
 * MAX_RETRY_AFTER_MS gives the job up instead: a chat notification that late is worth less than
 * the load, and retrying sooner than asked is what the push service told us not to do.
 */
import { defaultRetry, type RetryPolicy } from '../bus/types.ts';
import { RetryablePushError } from './sender.ts';

/** The longest Retry-After the queue waits for (5 minutes); longer gives the job up. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Retry-After as ms from `now`, or null when absent or malformed; a past date is 0. */
export function parseRetryAfter(value: string | string[] | undefined | null, now: number = Date.now()): number | null {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (raw === undefined || raw === '') return null;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  // An HTTP date (IMF-fixdate; Date.parse also takes the obsolete RFC 850 and asctime forms).
  if (!/[A-Za-z]/.test(raw)) return null;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The default backoff (200 ms doubling, 5 attempts), stretched to any Retry-After asked. */
export const pushRetryPolicy: RetryPolicy = (attempt, error) => {
  const backoff = defaultRetry(attempt, error);
  if (backoff === null) return null;
  const asked = error instanceof RetryablePushError ? error.retryAfterMs : null;
  if (asked === null) return backoff;
  if (asked > MAX_RETRY_AFTER_MS) return null;
  return Math.max(backoff, asked);
};
