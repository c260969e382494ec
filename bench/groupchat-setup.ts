/**
 * The `groupchat` bench's world: an IdP fixture with one generated user per stream (the demo
 * fixture plus G x U members of `acme`), the GROUP conversations, and for every member a user
 * token, a presence heartbeat, a registered web push device, and a realtime stream path.
 *
 * Every member is online (a heartbeat, with a presence window longer than the run) and has a
 * device, as a user with the app open in a browser that accepted notifications: the push job of
 * each message then finds devices and drops them for their online owners, the contract's path
 * for candidates who get the realtime event instead. The device endpoints point at a closed
 * loopback port, so a push that was sent by mistake fails fast and shows in the node's metrics.
 */
import { createECDH, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BASE, expectOk, type Api } from './fanout-sender.ts';
import { devUserToken } from './lib/dev-token.ts';
import { BenchError } from './lib/errors.ts';
import { benchUser } from './lib/groupchat-plan.ts';
import { inParallel } from './lib/parallel.ts';
import { REPO_ROOT } from './lib/processes.ts';

const DEMO_FIXTURE = path.join(REPO_ROOT, 'src/idp/demo-fixture.json');

export interface Member {
  user_id: string;
  token: string;
  /** `/api/v1/realtime/stream?credential=...` */
  streamPath: string;
}

export interface World {
  conversations: string[];
  /** [group][member] */
  members: Member[][];
  /** Earliest expiry of the user tokens and credentials (epoch ms). */
  expires: number;
}

/** Writes the demo fixture plus `groups` x `members` users of acme (tenant members, default app roles) to `dir`. */
export function writeFixture(dir: string, groups: number, members: number): string {
  const fixture = JSON.parse(readFileSync(DEMO_FIXTURE, 'utf8')) as { users: unknown[]; tenants: Array<{ tenant_id: string; members: unknown[] }> };
  const acme = fixture.tenants.find((t) => t.tenant_id === 'acme');
  if (!acme) throw new BenchError(`${DEMO_FIXTURE} has no tenant acme`);
  for (let g = 0; g < groups; g++) {
    for (let m = 0; m < members; m++) {
      const user_id = benchUser(g, m);
      fixture.users.push({ user_id, display_name: `Member ${m} of group ${g}`, avatar_url: null, status: 'ACTIVE' });
      acme.members.push({ user_id, status: 'ACTIVE', tenant_roles: ['tenant_member'], applications: {} });
    }
  }
  const file = path.join(dir, 'groupchat-fixture.json');
  writeFileSync(file, JSON.stringify(fixture));
  return file;
}

/** A web push subscription with a valid P-256 key, for a push service nobody listens on. */
function webSubscription(user_id: string): Record<string, unknown> {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    platform: 'web',
    subscription: { endpoint: `https://127.0.0.1:9/groupchat-bench/${user_id}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } },
  };
}

/**
 * Creates the conversations (as the machine client) and readies every member: token, heartbeat,
 * device (when `devices`), stream credential. `origin` is where clients go (the node, or the
 * balancer); `idp` the IdP's base URL.
 */
export async function buildWorld(machine: Api, origin: string, idp: string, groups: number, members: number, devices: boolean): Promise<World> {
  const conversations = await inParallel(Array.from({ length: groups }, (_, g) => g), 8, async (g) => {
    const ids = Array.from({ length: members }, (_, m) => benchUser(g, m));
    const res = await expectOk(machine, 'POST', `${BASE}/conversations`, { type: 'GROUP', name: `groupchat bench ${g}`, member_user_ids: ids });
    return res.conversation_id as string;
  });
  let expires = Number.POSITIVE_INFINITY;
  const all = await inParallel(
    Array.from({ length: groups * members }, (_, i) => i),
    8,
    async (i): Promise<Member> => {
      const user_id = benchUser(Math.floor(i / members), i % members);
      const access = await devUserToken({ idpBaseUrl: idp, userId: user_id, clientId: 'acme-support-web', clientSecret: 'acme-support-web-secret' });
      const api: Api = { origin, headers: { Authorization: `Bearer ${access.token}` } };
      const heartbeat = await fetch(`${origin}/api/v1/tenants/acme/presence/heartbeat`, { method: 'POST', headers: api.headers, signal: AbortSignal.timeout(10_000) });
      if (heartbeat.status !== 204) throw new BenchError(`heartbeat of ${user_id} answered ${heartbeat.status}: ${(await heartbeat.text()).slice(0, 500)}`);
      if (devices) {
        const res = await fetch(`${origin}/api/v1/tenants/acme/notifications/push/devices`, { method: 'POST', headers: Object.assign({ 'Content-Type': 'application/json' }, api.headers), body: JSON.stringify(webSubscription(user_id)), signal: AbortSignal.timeout(10_000) });
        if (res.status !== 204) throw new BenchError(`registering a push device of ${user_id} answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
      }
      const cred = await expectOk(api, 'GET', `${BASE}/notifications/realtime-token`);
      const url = new URL(cred.stream_url as string);
      expires = Math.min(expires, cred.expires as number, access.expiresAt ?? Number.POSITIVE_INFINITY);
      return { user_id, token: access.token, streamPath: url.pathname + url.search };
    },
  );
  const byGroup = Array.from({ length: groups }, (_, g) => all.slice(g * members, (g + 1) * members));
  return { conversations, members: byGroup, expires };
}
