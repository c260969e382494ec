/**
 * The IdP's signing keys: one current ES256 key signs; keys retired by `rotate()` stay in the
 * JWKS for `retentionSeconds` (the longest lifetime of any token this IdP issues), so every token
 * signed before a rotation keeps verifying until it expires anyway. Verifiers that meet an unknown
 * `kid` refetch the JWKS, so a rotation needs no restart anywhere.
 *
 * Where the keys come from:
 *  - the fixture's `signing_keys` when present: the first signs, the others are published for
 *    verification only (they are configuration, so they never age out). A restarted IdP then
 *    signs with the same key, and nodes keep trusting both its old and its new tokens;
 *  - otherwise, with a key file (the IdP's data directory: key-file.ts), the keys kept there: the
 *    first start generates one and writes it, every later start signs with it again, so tokens
 *    survive a restart. `rotate()` writes its new key (and the retired ones) to the file;
 *  - otherwise (no data directory: tests constructing a DevIdp) one key generated at start, in
 *    memory only, as are the keys `rotate()` makes then.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK, type JWTPayload } from 'jose';
import type { FixtureSigningKey } from './fixture-schema.ts';
import { createKeyFile, readKeyFile, replaceKeyFile, type StoredKey } from './key-file.ts';

export const SIGNING_ALG = 'ES256';

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: JWK;
  /** Epoch ms when a newer key took over from it; null while it signs, or for a configured key. */
  retiredAt: number | null;
}

export class KeyRing {
  /** Published keys, in the order they were added; `signer` is one of them. */
  private keys: SigningKey[];
  private signer: SigningKey;

  constructor(
    private readonly retentionSeconds: number,
    private readonly now: () => number,
    /** Configured keys (fixture `signing_keys`): the first signs, all are published. Empty: generate one. */
    configured: readonly FixtureSigningKey[] = [],
    /** Where generated keys are kept (ignored with configured keys); null: in memory only. */
    private readonly keyFile: string | null = null,
  ) {
    if (configured.length > 0) {
      this.keyFile = null;
      this.keys = configured.map(importSigningKey);
      this.signer = this.keys[0] as SigningKey;
    } else if (keyFile !== null) {
      const stored = readKeyFile(keyFile) ?? createKeyFile(keyFile, [{ jwk: exportSigningKey(newKey()), retiredAt: null }]);
      this.keys = stored.map((k) => Object.assign(importSigningKey(k.jwk), { retiredAt: k.retiredAt }));
      this.signer = this.keys.find((k) => k.retiredAt === null) as SigningKey;
      this.prune();
    } else {
      this.keys = [newKey()];
      this.signer = this.keys[0] as SigningKey;
    }
  }

  get currentKid(): string {
    return this.signer.kid;
  }

  /** A new key signs from now on; the previous signer is only published for verification. */
  rotate(): string {
    const next = newKey();
    this.signer.retiredAt = this.now();
    this.keys.push(next);
    this.signer = next;
    this.prune();
    if (this.keyFile !== null) replaceKeyFile(this.keyFile, this.keys.map((k): StoredKey => ({ jwk: exportSigningKey(k), retiredAt: k.retiredAt })));
    return next.kid;
  }

  jwks(): { keys: JWK[] } {
    this.prune();
    return { keys: this.keys.map((k) => ({ ...k.publicJwk })) };
  }

  async sign(claims: JWTPayload, typ: 'JWT' | 'at+jwt'): Promise<string> {
    const key = this.signer;
    return new SignJWT(claims).setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ }).sign(key.privateKey);
  }

  /** The verification key for a token header, as jose's `jwtVerify` key resolver expects. */
  verificationKey(header: { kid?: string; alg?: string }): KeyObject {
    this.prune();
    const key = header.alg === SIGNING_ALG ? this.keys.find((k) => k.kid === header.kid) : undefined;
    if (!key) throw new Error('the token was not signed by a key of this identity provider');
    return key.publicKey;
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

/** A signing key as the private JWK kept in the key file. */
function exportSigningKey(key: SigningKey): FixtureSigningKey {
  const { kty, crv, x, y, d } = key.privateKey.export({ format: 'jwk' });
  return { kty, crv, x, y, d, kid: key.kid } as FixtureSigningKey;
}

/**
 * A configured private JWK as a signing key. Throws an Error saying what is wrong when the JWK
 * is not a P-256 private key or its public part (x, y) does not belong to its private part (d);
 * the fixture loader reports that message with the key's location.
 */
export function importSigningKey(jwk: FixtureSigningKey): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d }, format: 'jwk' });
  } catch (err) {
    throw new Error(`not a valid P-256 private key: ${(err as Error).message}`);
  }
  const publicKey = createPublicKey(privateKey);
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  // Node takes x and y as given, without deriving them from d: a signature proves they match.
  const probe = Buffer.from('signing key check');
  if (!cryptoVerify('sha256', probe, publicKey, cryptoSign('sha256', probe, privateKey))) {
    throw new Error('x and y are not the public key of d');
  }
  return { kid: jwk.kid, privateKey, publicKey, publicJwk: { kty, crv, x, y, kid: jwk.kid, alg: SIGNING_ALG, use: 'sig' }, retiredAt: null };
}
