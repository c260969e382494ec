/**
 * FCM HTTP v1: `POST <endpoint>/v1/projects/<project>/messages:send` with an OAuth2 bearer
 * token from the service account (fcm-auth.ts). The Push notification document maps to
 *   {message: {token, notification: {title, body}, data: {the four ids}, android: {priority: 'high'}}}
 * (FCM data values are strings, as the ids are; the text is only in `notification`).
 *
 * Outcomes, as FCM answers (errors are `{error: {code, status, message, details}}`, the FCM
 * errorCode in the `google.firebase.fcm.v1.FcmError` detail):
 *  - 200: `sent`.
 *  - 404 or UNREGISTERED; 400 INVALID_ARGUMENT about the token (`message.token` field
 *    violation, or an invalid registration token): `gone`, the app was uninstalled or the token
 *    is not one.
 *  - 429 (QUOTA_EXCEEDED) and 5xx (UNAVAILABLE, INTERNAL), network errors, timeouts:
 *    RetryablePushError carrying Retry-After.
 *  - 401: the access token was refused (revoked or expired early): dropped, and retryable.
 *  - other 4xx (SENDER_ID_MISMATCH, THIRD_PARTY_AUTH_ERROR, another INVALID_ARGUMENT): `rejected`.
 */
import https from 'node:https';
import type { PushDevice } from '../store/index.ts';
import { FcmAccessTokens, type ServiceAccount } from './fcm-auth.ts';
import { httpsPost, safeJson } from './https-post.ts';
import type { PushDocument } from './payload.ts';
import { parseRetryAfter } from './retry.ts';
import { RetryablePushError, type PushSender, type SendResult } from './sender.ts';
import { pushCa } from './tls-ca.ts';

export const FCM_ENDPOINT = 'https://fcm.googleapis.com';

export interface FcmSenderOptions {
  account: ServiceAccount;
  /** Default: the key's project_id. */
  projectId: string;
  /** Base URL of the FCM API; default FCM_ENDPOINT (tests point it at a stand-in). */
  endpoint?: string;
  timeoutMs: number;
  caFile: string | null;
  now?: () => number;
}

export interface FcmMessage {
  message: { token: string; notification: { title: string; body: string }; data: Record<string, string>; android: { priority: 'high' } };
}

export function fcmMessage(token: string, document: PushDocument): FcmMessage {
  return { message: { token, notification: { ...document.notification }, data: { ...document.data }, android: { priority: 'high' } } };
}

export class FcmSender implements PushSender {
  readonly platform = 'fcm' as const;
  private readonly agent: https.Agent;
  private readonly tokens: FcmAccessTokens;
  private readonly url: string;
  private readonly now: () => number;

  constructor(private readonly o: FcmSenderOptions) {
    const ca = pushCa(o.caFile);
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...(ca ? { ca } : {}) });
    this.now = o.now ?? Date.now;
    this.tokens = new FcmAccessTokens(o.account, { agent: this.agent, timeoutMs: o.timeoutMs, now: this.now });
    this.url = `${(o.endpoint ?? FCM_ENDPOINT).replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(o.projectId)}/messages:send`;
  }

  async send(device: PushDevice, document: PushDocument): Promise<SendResult> {
    const bearer = await this.tokens.get();
    let res;
    try {
      res = await httpsPost(this.url, { authorization: `Bearer ${bearer}`, 'content-type': 'application/json; charset=utf-8' }, JSON.stringify(fcmMessage(device.token_or_endpoint, document)), this.agent, this.o.timeoutMs);
    } catch (err) {
      throw new RetryablePushError(`FCM request failed: ${(err as Error).message}`, null);
    }
    const s = res.status;
    if (s >= 200 && s < 300) return { outcome: 'sent', statusCode: s };
    const error = fcmError(res.body);
    if (s === 404 || error.code === 'UNREGISTERED' || (s === 400 && error.code === 'INVALID_ARGUMENT' && error.aboutToken)) return { outcome: 'gone', statusCode: s, reason: error.code };
    if (s === 429 || s >= 500) throw new RetryablePushError(`FCM answered ${s} ${error.code}`, s, parseRetryAfter(res.headers['retry-after'], this.now()));
    if (s === 401) {
      this.tokens.invalidate(bearer);
      throw new RetryablePushError(`FCM refused the access token (${error.code})`, s);
    }
    return { outcome: 'rejected', statusCode: s, reason: error.code };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The FCM errorCode (else the RPC status) and whether the error is about the token. */
function fcmError(text: string): { code: string; aboutToken: boolean } {
  const error = safeJson(text).error;
  if (typeof error !== 'object' || error === null) return { code: '', aboutToken: false };
  const e = error as { status?: unknown; message?: unknown; details?: unknown };
  const details = Array.isArray(e.details) ? (e.details as Array<Record<string, unknown>>) : [];
  const fcm = details.find((d) => typeof d?.errorCode === 'string');
  const code = typeof fcm?.errorCode === 'string' ? fcm.errorCode : typeof e.status === 'string' ? e.status : '';
  const violations = details.flatMap((d) => (Array.isArray(d?.fieldViolations) ? (d.fieldViolations as Array<{ field?: unknown }>) : []));
  const aboutToken = violations.some((v) => v?.field === 'message.token') || (typeof e.message === 'string' && /registration token/i.test(e.message));
  return { code, aboutToken };
}
