/**
 * Opaque, tamper-evident cursors over store page positions.
 *
 * A cursor is `base64url(JSON {v, k, s, p}) "." base64url(HMAC-SHA256(secret, payload)[0..16])`:
 * `k` names the list (conversations, messages, members), `s` binds it to the exact list it came
 * from (the conversation, or the context + viewer + filter of a conversation listing), `p` is the
 * store's position. Anything the service did not issue for this list — edited, truncated, from
 * another list, another viewer or another deployment secret — is `invalid_cursor`.
 *
 * The secret comes from CHAT_CURSOR_SECRET (all nodes of a cluster must share it) or is generated
 * on first start and kept in the data directory, like the VAPID keys.
 */
import crypto from 'node:crypto';
import { loadSecret } from '../../config/secrets.ts';
import { ApiError } from '../../errors/catalog.ts';

export type CursorKind = 'conversations' | 'messages' | 'members';

const VERSION = 1;
const MAC_BYTES = 16;

export class CursorCodec {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new RangeError('cursor secret must be at least 32 bytes');
  }

  encode(kind: CursorKind, scope: string, position: unknown): string {
    const payload = Buffer.from(JSON.stringify({ v: VERSION, k: kind, s: scope, p: position })).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The position inside a cursor issued for this kind and scope; `invalid_cursor` otherwise. */
  decode(kind: CursorKind, scope: string, cursor: string): unknown {
    const dot = cursor.indexOf('.');
    const payload = dot > 0 ? cursor.slice(0, dot) : '';
    const mac = dot > 0 ? cursor.slice(dot + 1) : '';
    const expected = this.mac(payload);
    if (payload === '' || mac.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
      throw invalid();
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    const b = body as { v?: unknown; k?: unknown; s?: unknown; p?: unknown };
    if (typeof body !== 'object' || body === null || b.v !== VERSION || b.k !== kind || b.s !== scope || b.p === undefined) {
      throw invalid();
    }
    return b.p;
  }

  private mac(payload: string): string {
    return crypto.createHmac('sha256', this.secret).update(payload).digest().subarray(0, MAC_BYTES).toString('base64url');
  }
}

function invalid(): ApiError {
  return new ApiError('invalid_cursor', 'the cursor was not issued by this service for this list');
}

/** The secret: configured, or generated once into `<data dir>/cursor-secret` (src/config/secrets.ts). */
export function loadCursorSecret(configured: string | null, dataDir: string): Buffer {
  return loadSecret('cursor-secret', configured, dataDir);
}
