/**
 * Sends one encrypted notification to one browser subscription with the `web-push` package:
 * VAPID (RFC 8292) signed with the node's keys, payload encrypted aes128gcm (RFC 8291).
 *
 * Outcomes, as the push service answers:
 *  - 2xx: `sent`.
 *  - 404/410: `gone`: the subscription no longer exists; the caller prunes it.
 *  - 429, 5xx, network errors and timeouts: thrown as RetryablePushError (the work queue retries
 *    the job with its backoff).
 *  - any other 4xx (bad request, payload too large, VAPID refused): `rejected`, not retried:
 *    sending the same request again cannot succeed.
 *
 * TLS: the system CAs, plus `caFile` when configured (a private push gateway, or the tests'
 * stand-in push service with its self-signed certificate).
 */
import fs from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import webpush, { WebPushError } from 'web-push';
import type { VapidKeys } from './vapid.ts';

export interface WebSubscription {
  endpoint: string;
  p256dh: string;
  auth: string;
}

export type SendOutcome = 'sent' | 'gone' | 'rejected';

export class RetryablePushError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null,
  ) {
    super(message);
    this.name = 'RetryablePushError';
  }
}

export interface WebPushSenderOptions {
  timeoutMs: number;
  caFile: string | null;
  /** Seconds the push service keeps an undelivered notification; default 1 day. */
  ttlSeconds?: number;
}

export interface PushSender {
  send(subscription: WebSubscription, payload: string): Promise<{ outcome: SendOutcome; statusCode: number | null }>;
  close(): void;
}

export class WebPushSender implements PushSender {
  private readonly agent: https.Agent;

  constructor(
    private readonly vapid: VapidKeys,
    private readonly options: WebPushSenderOptions,
  ) {
    const ca = options.caFile === null ? undefined : [...tls.rootCertificates, fs.readFileSync(options.caFile, 'utf8')];
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...(ca ? { ca } : {}) });
  }

  async send(subscription: WebSubscription, payload: string): Promise<{ outcome: SendOutcome; statusCode: number | null }> {
    try {
      const res = await webpush.sendNotification({ endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } }, payload, {
        vapidDetails: { subject: this.vapid.subject, publicKey: this.vapid.publicKey, privateKey: this.vapid.privateKey },
        contentEncoding: 'aes128gcm',
        TTL: this.options.ttlSeconds ?? 86_400,
        timeout: this.options.timeoutMs,
        agent: this.agent,
      });
      return { outcome: 'sent', statusCode: res.statusCode };
    } catch (err) {
      if (err instanceof WebPushError) {
        const s = err.statusCode;
        if (s === 404 || s === 410) return { outcome: 'gone', statusCode: s };
        if (s === 429 || s >= 500) throw new RetryablePushError(`push service answered ${s}`, s);
        return { outcome: 'rejected', statusCode: s };
      }
      // Network errors, timeouts, TLS failures: transient as far as we can tell.
      throw new RetryablePushError(`push request failed: ${(err as Error).message}`, null);
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
