/**
 * The secrets every node of a cluster must share (a value generated per node would not verify on
 * the others): the node-to-node secret, the page-cursor and realtime-credential keys, and one
 * VAPID key pair (browsers subscribe with its public key, whichever node served it). Generated
 * once into `<dir>/secrets.json` (mode 0600) so a restarted cluster keeps cursors, stream
 * credentials and push subscriptions valid.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import webpush from 'web-push';

export interface ClusterSecrets {
  clusterSecret: string;
  cursorSecret: string;
  realtimeSecret: string;
  vapidPublicKey: string;
  vapidPrivateKey: string;
}

const hex32 = (): string => crypto.randomBytes(32).toString('hex');

export function generateSecrets(): ClusterSecrets {
  const vapid = webpush.generateVAPIDKeys();
  return { clusterSecret: hex32(), cursorSecret: hex32(), realtimeSecret: hex32(), vapidPublicKey: vapid.publicKey, vapidPrivateKey: vapid.privateKey };
}

function isSecrets(v: unknown): v is ClusterSecrets {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return ['clusterSecret', 'cursorSecret', 'realtimeSecret', 'vapidPublicKey', 'vapidPrivateKey'].every((k) => typeof o[k] === 'string' && o[k] !== '');
}

export function loadOrCreateSecrets(dir: string): ClusterSecrets {
  const file = path.join(dir, 'secrets.json');
  if (fs.existsSync(file)) {
    const saved: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!isSecrets(saved)) throw new Error(`${file} is not a cluster secrets file; remove it to generate new secrets`);
    return saved;
  }
  const secrets = generateSecrets();
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}
