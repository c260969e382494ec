/**
 * The realtime stream credential: subscribe-only, short-lived, HMAC-signed.
 *
 *   credential = base64url(JSON {v, t, a, u, c, x}) "." base64url(HMAC-SHA256(secret, payload)[0..16])
 *
 *   v  format version (1)
 *   t  tenant_id, a application_id, u user_id (the stream filters the user's own channel, which is
 *      per tenant, to events of application `a`)
 *   c  the bus channels the holder may read, exactly: the user's own channel, the CHANNEL
 *      conversations they were an ACTIVE member of when it was issued, and at most one PUBLIC
 *      channel they were viewing
 *   x  expiry, epoch milliseconds (never after the user token's own expiry)
 *
 * At most MAX_GRANT_CHANNELS channels: the stream's composite event id carries a position for
 * every channel it follows (event-id.ts), and this cap is what bounds its length.
 *
 * It grants nothing but reading those channels: the JSON API never accepts it. The secret comes
 * from CHAT_REALTIME_SECRET (every node of a cluster must share it) or is generated once into the
 * data directory, like the cursor secret.
 */
import crypto from 'node:crypto';
import { loadSecret } from '../config/secrets.ts';

const VERSION = 1;
const MAC_BYTES = 16;

/**
 * The most channels a credential names (the user's own, their CHANNEL conversations, one viewed
 * PUBLIC channel). With event-id.ts's MAX_ENTRY_LENGTH per channel, every composite id then
 * fits in MAX_EVENT_ID_LENGTH: 256 x 62 = 15,872 < 16,384.
 */
export const MAX_GRANT_CHANNELS = 256;

export interface RealtimeGrant {
  tenant_id: string;
  application_id: string;
  user_id: string;
  channels: string[];
  /** Epoch milliseconds. */
  expires: number;
}

export type VerifyResult = { ok: true; grant: RealtimeGrant } | { ok: false; reason: 'malformed' | 'forged' | 'expired' };

export class RealtimeCredentials {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new RangeError('realtime secret must be at least 32 bytes');
  }

  /** Throws a RangeError for a grant naming more than MAX_GRANT_CHANNELS channels. */
  sign(grant: RealtimeGrant): string {
    if (grant.channels.length > MAX_GRANT_CHANNELS) throw new RangeError(`a realtime credential names at most ${MAX_GRANT_CHANNELS} channels (got ${grant.channels.length})`);
    const body = { v: VERSION, t: grant.tenant_id, a: grant.application_id, u: grant.user_id, c: grant.channels, x: grant.expires };
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  verify(credential: string, now = Date.now()): VerifyResult {
    const dot = credential.indexOf('.');
    if (dot <= 0) return { ok: false, reason: 'malformed' };
    const payload = credential.slice(0, dot);
    const mac = credential.slice(dot + 1);
    const expected = this.mac(payload);
    if (mac.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) return { ok: false, reason: 'forged' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    if (typeof parsed !== 'object' || parsed === null) return { ok: false, reason: 'malformed' };
    const b = parsed as Record<string, unknown>;
    if (
      b.v !== VERSION ||
      typeof b.t !== 'string' ||
      typeof b.a !== 'string' ||
      typeof b.u !== 'string' ||
      typeof b.x !== 'number' ||
      !Array.isArray(b.c) ||
      b.c.length > MAX_GRANT_CHANNELS ||
      !b.c.every((c): c is string => typeof c === 'string')
    ) {
      return { ok: false, reason: 'malformed' };
    }
    if (b.x <= now) return { ok: false, reason: 'expired' };
    return { ok: true, grant: { tenant_id: b.t, application_id: b.a, user_id: b.u, channels: b.c, expires: b.x } };
  }

  private mac(payload: string): string {
    return crypto.createHmac('sha256', this.secret).update(payload).digest().subarray(0, MAC_BYTES).toString('base64url');
  }
}

/** The secret: configured, or generated once into `<data dir>/realtime-secret` (src/config/secrets.ts). */
export function loadRealtimeSecret(configured: string | null, dataDir: string): Buffer {
  return loadSecret('realtime-secret', configured, dataDir);
}
