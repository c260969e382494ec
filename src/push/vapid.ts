/**
 * VAPID keys for web push: from configuration, or generated on first start and persisted in the
 * data directory (mode 0600) so every restart serves the same public key — browsers subscribed
 * with it keep working. With web push off the public key is empty, as the contract says.
 */
import fs from 'node:fs';
import path from 'node:path';
import webpush from 'web-push';
import type { WebPushConfig } from '../config/index.ts';

export interface VapidKeys {
  /** URL-safe base64 public key; '' when web push is off. */
  publicKey: string;
  privateKey: string;
  subject: string;
}

export function loadVapidKeys(cfg: WebPushConfig, dataDir: string): VapidKeys {
  if (!cfg.enabled) return { publicKey: '', privateKey: '', subject: cfg.subject };
  if (cfg.vapidPublicKey && cfg.vapidPrivateKey) {
    return { publicKey: cfg.vapidPublicKey, privateKey: cfg.vapidPrivateKey, subject: cfg.subject };
  }
  const file = path.join(dataDir, 'vapid.json');
  try {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { publicKey?: unknown; privateKey?: unknown };
    if (typeof saved.publicKey === 'string' && typeof saved.privateKey === 'string') {
      return { publicKey: saved.publicKey, privateKey: saved.privateKey, subject: cfg.subject };
    }
    throw new Error(`${file} does not hold a VAPID key pair`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const keys = webpush.generateVAPIDKeys();
  fs.mkdirSync(dataDir, { recursive: true });
  // Write a temporary file, then link it into place: a crash never leaves a half-written key
  // file, and when two nodes sharing a data directory race, the first link wins and the other
  // reads the winner's pair instead of serving a key of its own.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(keys), { mode: 0o600 });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return loadVapidKeys(cfg, dataDir);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return { publicKey: keys.publicKey, privateKey: keys.privateKey, subject: cfg.subject };
}
