/**
 * The push senders a node runs, from configuration: web push with the node's VAPID keys, FCM
 * with a service-account key, APNs with a .p8 token key. A platform left unconfigured (null) has
 * no sender: its devices stay registered and are skipped by the worker.
 *
 * The bus's work queue should retry push jobs with `pushRetryPolicy` (Retry-After honoured).
 */
import fs from 'node:fs';
import { APNS_PRODUCTION, APNS_SANDBOX, ApnsSender } from './apns-sender.ts';
import { loadServiceAccount } from './fcm-auth.ts';
import { FcmSender } from './fcm-sender.ts';
import type { PushSenders } from './sender.ts';
import type { VapidKeys } from './vapid.ts';
import { WebPushSender } from './web-push-sender.ts';

export { pushRetryPolicy, parseRetryAfter, MAX_RETRY_AFTER_MS } from './retry.ts';
export { PushWorker, type PushWorkerStats } from './push-worker.ts';
export { registerPushMetrics } from './push-metrics.ts';
export { PushGiveUps } from './give-ups.ts';
export { RetryablePushError, type PushSender, type PushSenders } from './sender.ts';
export { APNS_PRODUCTION, APNS_SANDBOX } from './apns-sender.ts';
export { FCM_ENDPOINT } from './fcm-sender.ts';

export interface FcmConfig {
  /** The service-account key JSON file (Firebase console: Project settings, Service accounts). */
  serviceAccountFile: string;
  /** Default: the key's project_id. */
  projectId: string | null;
  /** Default https://fcm.googleapis.com. */
  endpoint: string | null;
  /** Default: the key's token_uri. */
  tokenUri: string | null;
}

export interface ApnsConfig {
  /** The .p8 key file (PKCS#8 PEM) of an APNs auth key. */
  keyFile: string;
  keyId: string;
  teamId: string;
  /** The app's bundle id (apns-topic). */
  topic: string;
  /** `production`, `sandbox`, or an origin URL (a stand-in). */
  origin: string;
}

export interface PushSendersConfig {
  /** null: web push off. */
  vapid: VapidKeys | null;
  fcm: FcmConfig | null;
  apns: ApnsConfig | null;
  timeoutMs: number;
  caFile: string | null;
}

/** Builds the senders; throws (a clear message naming the file) when a key file is unusable. */
export function createPushSenders(cfg: PushSendersConfig): PushSenders {
  const { timeoutMs, caFile } = cfg;
  const senders: PushSenders = {};
  if (cfg.vapid !== null && cfg.vapid.publicKey !== '') senders.web = new WebPushSender(cfg.vapid, { timeoutMs, caFile });
  if (cfg.fcm !== null) {
    const account = loadServiceAccount(cfg.fcm.serviceAccountFile);
    if (cfg.fcm.tokenUri !== null) account.token_uri = cfg.fcm.tokenUri;
    const projectId = cfg.fcm.projectId ?? account.project_id;
    if (projectId === null) throw new Error(`${cfg.fcm.serviceAccountFile} has no project_id: set CHAT_FCM_PROJECT_ID`);
    senders.fcm = new FcmSender({ account, projectId, timeoutMs, caFile, ...(cfg.fcm.endpoint !== null ? { endpoint: cfg.fcm.endpoint } : {}) });
  }
  if (cfg.apns !== null) {
    const origin = cfg.apns.origin === 'production' ? APNS_PRODUCTION : cfg.apns.origin === 'sandbox' ? APNS_SANDBOX : cfg.apns.origin;
    senders.apns = new ApnsSender({ keyPem: fs.readFileSync(cfg.apns.keyFile, 'utf8'), keyId: cfg.apns.keyId, teamId: cfg.apns.teamId, topic: cfg.apns.topic, origin, timeoutMs, caFile });
  }
  return senders;
}
