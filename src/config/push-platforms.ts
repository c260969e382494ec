/** FCM and APNs settings (CHAT_FCM_*, CHAT_APNS_*): README's table, docs/push.md. */
import type { Env, EnvReader } from './env-reader.ts';

/** FCM HTTP v1 (src/push/fcm-sender.ts); null: fcm tokens are stored but not delivered. */
export interface FcmSettings {
  serviceAccountFile: string;
  projectId: string | null;
  endpoint: string | null;
  tokenUri: string | null;
}

/** APNs with token auth (src/push/apns-sender.ts); null: apns tokens are stored but not delivered. */
export interface ApnsSettings {
  keyFile: string;
  keyId: string;
  teamId: string;
  topic: string;
  /** `production`, `sandbox`, or an https origin. */
  origin: string;
}

export function pushPlatformSettings(env: Env, r: EnvReader, problems: string[]): { fcm: FcmSettings | null; apns: ApnsSettings | null } {
  const { str, url, file } = r;
  const fcmFile = file('CHAT_FCM_SERVICE_ACCOUNT_FILE');
  const fcm: FcmSettings | null = fcmFile
    ? {
        serviceAccountFile: fcmFile,
        projectId: env.CHAT_FCM_PROJECT_ID || null,
        endpoint: env.CHAT_FCM_ENDPOINT ? url('CHAT_FCM_ENDPOINT', env.CHAT_FCM_ENDPOINT) : null,
        tokenUri: env.CHAT_FCM_TOKEN_URI ? url('CHAT_FCM_TOKEN_URI', env.CHAT_FCM_TOKEN_URI) : null,
      }
    : null;
  const apnsFile = file('CHAT_APNS_KEY_FILE');
  let apns: ApnsSettings | null = null;
  if (apnsFile) {
    const keyId = str('CHAT_APNS_KEY_ID', '');
    const teamId = str('CHAT_APNS_TEAM_ID', '');
    const topic = str('CHAT_APNS_TOPIC', '');
    if (!/^[A-Z0-9]{10}$/i.test(keyId)) problems.push(`CHAT_APNS_KEY_ID must be the 10-character key id (got "${keyId}")`);
    if (!/^[A-Z0-9]{10}$/i.test(teamId)) problems.push(`CHAT_APNS_TEAM_ID must be the 10-character team id (got "${teamId}")`);
    if (topic === '') problems.push('CHAT_APNS_TOPIC must be the app bundle id when CHAT_APNS_KEY_FILE is set');
    const origin = str('CHAT_APNS_ENV', 'production');
    if (origin !== 'production' && origin !== 'sandbox' && !/^https:\/\//.test(origin)) problems.push(`CHAT_APNS_ENV must be production, sandbox or an https:// origin (got "${origin}")`);
    apns = { keyFile: apnsFile, keyId, teamId, topic, origin };
  } else {
    for (const name of ['CHAT_APNS_KEY_ID', 'CHAT_APNS_TEAM_ID', 'CHAT_APNS_TOPIC']) {
      if (env[name]) problems.push(`${name} is set but CHAT_APNS_KEY_FILE is not: APNs needs its key file`);
    }
  }
  return { fcm, apns };
}
