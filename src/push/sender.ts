/**
 * The push sender port: one driver per device platform (`web-push-sender.ts`, `fcm-sender.ts`,
 * `apns-sender.ts`), each delivering one Push notification document to one device.
 *
 * Contract every sender keeps:
 *  - `send` resolves with the push service's verdict on this device:
 *      `sent`      accepted for delivery;
 *      `gone`      the device no longer exists (web 404/410, FCM UNREGISTERED, APNs 410...):
 *                  the caller prunes it and never sends to it again;
 *      `rejected`  refused for a reason that sending the same request again cannot fix.
 *  - `send` rejects with RetryablePushError when the failure is transient (429, 5xx, network
 *    errors, timeouts, an expired credential): the work queue retries the job, no sooner than
 *    `retryAfterMs` when the push service said how long to wait (Retry-After).
 *  - Any other rejection is a bug, not a push service answer.
 *  - `close` releases connections; sends after it are not expected.
 */
import type { PushDevice, PushPlatform } from '../store/index.ts';
import type { PushDocument } from './payload.ts';

export type SendOutcome = 'sent' | 'gone' | 'rejected';

export interface SendResult {
  outcome: SendOutcome;
  /** The push service's HTTP status; null when none was answered. */
  statusCode: number | null;
  /** The push service's reason (FCM errorCode, APNs reason), for the log. */
  reason?: string;
}

export interface PushSender {
  readonly platform: PushPlatform;
  send(device: PushDevice, document: PushDocument): Promise<SendResult>;
  close(): void;
}

/** The senders a node runs, by platform; a platform without one is not delivered. */
export type PushSenders = Partial<Record<PushPlatform, PushSender>>;

export class RetryablePushError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null,
    /** How long the push service asked us to wait (Retry-After), in ms; null: it did not say. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'RetryablePushError';
  }
}
