/**
 * The IdP's signing keys: one current ES256 key signs; keys retired by `rotate()` stay in the
 * JWKS for `retentionSeconds` (the longest lifetime of any token this IdP issues), so every token
 * signed before a rotation keeps verifying until it expires anyway. Verifiers that meet an unknown
 * `kid` refetch the JWKS, so a rotation needs no restart anywhere.
 *
 * Keys live in memory only: a restarted development IdP has new keys, and tokens it issued before
 * stop verifying, exactly as after a key compromise.
 */
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK, type JWTPayload } from 'jose';

export const SIGNING_ALG = 'ES256';

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: JWK;
  /** Epoch ms when a newer key took over; null for the current key. */
  retiredAt: number | null;
}

export class KeyRing {
  private keys: SigningKey[];

  constructor(
    private readonly retentionSeconds: number,
    private readonly now: () => number,
  ) {
    this.keys = [newKey()];
  }

  get currentKid(): string {
    return this.current().kid;
  }

  /** A new key signs from now on; the previous one is only published for verification. */
  rotate(): string {
    const next = newKey();
    const at = this.now();
    for (const k of this.keys) k.retiredAt ??= at;
    this.keys.push(next);
    this.prune();
    return next.kid;
  }

  jwks(): { keys: JWK[] } {
    this.prune();
    return { keys: this.keys.map((k) => ({ ...k.publicJwk })) };
  }

  async sign(claims: JWTPayload, typ: 'JWT' | 'at+jwt'): Promise<string> {
    const key = this.current();
    return new SignJWT(claims).setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ }).sign(key.privateKey);
  }

  /** The verification key for a token header, as jose's `jwtVerify` key resolver expects. */
  verificationKey(header: { kid?: string; alg?: string }): KeyObject {
    this.prune();
    const key = header.alg === SIGNING_ALG ? this.keys.find((k) => k.kid === header.kid) : undefined;
    if (!key) throw new Error('the token was not signed by a key of this identity provider');
    return key.publicKey;
  }

  private current(): SigningKey {
    const key = this.keys[this.keys.length - 1];
    if (!key) throw new Error('key ring is empty');
    return key;
  }

  private prune(): void {
    const cutoff = this.now() - this.retentionSeconds * 1000;
    this.keys = this.keys.filter((k) => k.retiredAt === null || k.retiredAt > cutoff);
  }
}

/**
 * Node's synchronous P-256 key generation (well under a millisecond) rather than jose's async
 * generateKeyPair, so the IdP is ready as soon as it is constructed; jose signs and verifies
 * with KeyObjects directly.
 */
function newKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomBytes(12).toString('base64url');
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  return { kid, privateKey, publicKey, publicJwk: { kty, crv, x, y, kid, alg: SIGNING_ALG, use: 'sig' }, retiredAt: null };
}
