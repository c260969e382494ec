/**
 * Sends one encrypted notification to one browser subscription with the `web-push` package:
 * VAPID (RFC 8292) signed with the node's keys, payload (the document as JSON) encrypted
 * aes128gcm (RFC 8291).
 *
 * Outcomes, as the push service answers:
 *  - 2xx: `sent`.
 *  - 404/410: `gone`: the subscription no longer exists; the caller prunes it.
 *  - 429, 5xx, network errors and timeouts: thrown as RetryablePushError, with the push
 *    service's Retry-After when it sent one (the work queue retries the job no sooner).
 *  - any other 4xx (bad request, payload too large, VAPID refused): `rejected`, not retried:
 *    sending the same request again cannot succeed. A device row without keys (never written by
 *    the registration route) is `rejected` without a request.
 *
 * TLS: the system CAs, plus `caFile` when configured (a private push gateway, or the tests'
 * stand-in push service with its self-signed certificate).
 */
import https from 'node:https';
import webpush, { WebPushError } from 'web-push';
import type { PushDevice } from '../store/index.ts';
import type { PushDocument } from './payload.ts';
import { parseRetryAfter } from './retry.ts';
import { RetryablePushError, type PushSender, type SendResult } from './sender.ts';
import { pushCa } from './tls-ca.ts';
import type { VapidKeys } from './vapid.ts';

export { RetryablePushError, type PushSender, type SendOutcome, type SendResult } from './sender.ts';

export interface WebPushSenderOptions {
  timeoutMs: number;
  caFile: string | null;
  /** Seconds the push service keeps an undelivered notification; default 1 day. */
  ttlSeconds?: number;
}

export class WebPushSender implements PushSender {
  readonly platform = 'web' as const;
  private readonly agent: https.Agent;

  constructor(
    private readonly vapid: VapidKeys,
    private readonly options: WebPushSenderOptions,
  ) {
    const ca = pushCa(options.caFile);
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...(ca ? { ca } : {}) });
  }

  async send(device: PushDevice, document: PushDocument): Promise<SendResult> {
    if (device.p256dh === null || device.auth === null) return { outcome: 'rejected', statusCode: null, reason: 'no subscription keys' };
    try {
      const res = await webpush.sendNotification({ endpoint: device.token_or_endpoint, keys: { p256dh: device.p256dh, auth: device.auth } }, JSON.stringify(document), {
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
        if (s === 429 || s >= 500) throw new RetryablePushError(`push service answered ${s}`, s, parseRetryAfter(err.headers['retry-after']));
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
