/**
 * The `.env` file docker-compose.cluster.yml reads: the secrets every node shares, generated
 * fresh. Written once, mode 0600; never overwritten (new secrets would invalidate every cursor,
 * stream credential and push subscription of a running deployment).
 */
import fs from 'node:fs';
import { generateSecrets } from './secrets.ts';

export function renderComposeEnv(): string {
  const s = generateSecrets();
  return [
    '# Shared by every chat node of docker-compose.cluster.yml (docs/deploy.md). Keep it secret.',
    `CHAT_CLUSTER_SECRET=${s.clusterSecret}`,
    `CHAT_CURSOR_SECRET=${s.cursorSecret}`,
    `CHAT_REALTIME_SECRET=${s.realtimeSecret}`,
    `CHAT_VAPID_PUBLIC_KEY=${s.vapidPublicKey}`,
    `CHAT_VAPID_PRIVATE_KEY=${s.vapidPrivateKey}`,
    '# Must be one of the IdP fixture\'s directory_api_keys (src/idp/demo-fixture.json: dev-directory-key).',
    'CHAT_IDP_DIRECTORY_KEY=dev-directory-key',
    '# What clients call: the load balancer, as they reach it, with /api/v1.',
    'CHAT_PUBLIC_BASE_URL=http://localhost:8080/api/v1',
    '',
  ].join('\n');
}

export function writeComposeEnv(file: string): void {
  fs.writeFileSync(file, renderComposeEnv(), { mode: 0o600, flag: 'wx' });
}
