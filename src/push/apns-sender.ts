/**
 * APNs over HTTP/2 with token-based authentication: `POST /3/device/<token>` on one long-lived
 * session per origin (http2-origin.ts), `authorization: bearer <provider token>`
 * (apns-token.ts), `apns-topic` the app's bundle id, `apns-push-type: alert`,
 * `apns-priority: 10` (now), `apns-expiration` one day ahead (as web push's TTL). The Push
 * notification document maps to
 *   {aps: {alert: {title, body}, sound: 'default'}, tenant_id, application_id, conversation_id, message_id}
 * (custom keys beside `aps` are the data; the text is only in the alert).
 *
 * Outcomes, as APNs answers (errors are `{reason}`):
 *  - 200: `sent`.
 *  - 410, or 400 BadDeviceToken / Unregistered: `gone`.
 *  - 429 and 5xx, network errors, GOAWAY before processing, timeouts: RetryablePushError
 *    (Retry-After when APNs sends one).
 *  - 403 ExpiredProviderToken: the provider token is renewed, and retryable.
 *  - anything else (DeviceTokenNotForTopic, BadTopic, InvalidProviderToken, PayloadTooLarge...):
 *    `rejected`.
 */
import type { PushDevice } from '../store/index.ts';
import { safeJson } from './https-post.ts';
import { ApnsProviderToken } from './apns-token.ts';
import { Http2Origin } from './http2-origin.ts';
import type { PushDocument } from './payload.ts';
import { parseRetryAfter } from './retry.ts';
import { RetryablePushError, type PushSender, type SendResult } from './sender.ts';
import { pushCa } from './tls-ca.ts';

export const APNS_PRODUCTION = 'https://api.push.apple.com';
export const APNS_SANDBOX = 'https://api.sandbox.push.apple.com';
const EXPIRATION_S = 86_400;

export interface ApnsSenderOptions {
  /** The .p8 signing key (PKCS#8 PEM). */
  keyPem: string;
  keyId: string;
  teamId: string;
  /** The app's bundle id. */
  topic: string;
  /** APNS_PRODUCTION, APNS_SANDBOX, or a stand-in's origin. */
  origin: string;
  timeoutMs: number;
  caFile: string | null;
  now?: () => number;
}

export interface ApnsPayload {
  aps: { alert: { title: string; body: string }; sound: 'default' };
  [data: string]: unknown;
}

export function apnsPayload(document: PushDocument): ApnsPayload {
  return { aps: { alert: { ...document.notification }, sound: 'default' }, ...document.data };
}

export class ApnsSender implements PushSender {
  readonly platform = 'apns' as const;
  readonly http: Http2Origin;
  private readonly token: ApnsProviderToken;
  private readonly now: () => number;

  constructor(private readonly o: ApnsSenderOptions) {
    this.now = o.now ?? Date.now;
    this.token = new ApnsProviderToken(o.keyPem, o.keyId, o.teamId, this.now);
    const ca = pushCa(o.caFile);
    this.http = new Http2Origin(o.origin, { timeoutMs: o.timeoutMs, ...(ca ? { ca } : {}) });
  }

  async send(device: PushDevice, document: PushDocument): Promise<SendResult> {
    const jwt = await this.token.get();
    let res;
    try {
      res = await this.http.request(
        {
          ':path': `/3/device/${encodeURIComponent(device.token_or_endpoint)}`,
          authorization: `bearer ${jwt}`,
          'apns-topic': this.o.topic,
          'apns-push-type': 'alert',
          'apns-priority': '10',
          'apns-expiration': String(Math.floor(this.now() / 1000) + EXPIRATION_S),
          'content-type': 'application/json',
        },
        JSON.stringify(apnsPayload(document)),
      );
    } catch (err) {
      throw new RetryablePushError(`APNs request failed: ${(err as Error).message}`, null);
    }
    const s = res.status;
    if (s === 200) return { outcome: 'sent', statusCode: s };
    const answer = safeJson(res.body);
    const reason = typeof answer.reason === 'string' ? answer.reason : '';
    if (s === 410 || (s === 400 && (reason === 'BadDeviceToken' || reason === 'Unregistered'))) return { outcome: 'gone', statusCode: s, reason };
    if (s === 429 || s >= 500) throw new RetryablePushError(`APNs answered ${s} ${reason}`, s, parseRetryAfter(res.headers['retry-after'], this.now()));
    if (s === 403 && reason === 'ExpiredProviderToken') {
      this.token.invalidate(jwt);
      throw new RetryablePushError('APNs: provider token expired', s);
    }
    return { outcome: 'rejected', statusCode: s, reason };
  }

  close(): void {
    this.http.close();
  }
}
