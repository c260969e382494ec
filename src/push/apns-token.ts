/**
 * The APNs provider token: an ES256 JWT `{iss: team id, iat}` with the key id in its header,
 * signed with the .p8 key from the Apple developer account. APNs refuses a token older than an
 * hour (ExpiredProviderToken) and one replaced more often than every 20 minutes
 * (TooManyProviderTokenUpdates), so one token is shared by every request and renewed every
 * 50 minutes; `invalidate` renews it early after an ExpiredProviderToken.
 */
import crypto from 'node:crypto';
import { SignJWT } from 'jose';

export const PROVIDER_TOKEN_MAX_AGE_MS = 50 * 60_000;

export class ApnsProviderToken {
  private readonly key: crypto.KeyObject;
  private cached: { jwt: string; issuedAt: number } | null = null;
  private pending: Promise<{ jwt: string; issuedAt: number }> | null = null;

  constructor(
    keyPem: string,
    private readonly keyId: string,
    private readonly teamId: string,
    private readonly now: () => number,
  ) {
    // Checked here, so a wrong key file stops the node at start rather than failing every send.
    this.key = crypto.createPrivateKey(keyPem);
    if (this.key.asymmetricKeyType !== 'ec' || this.key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('the APNs key is not a P-256 (ES256) private key');
  }

  async get(): Promise<string> {
    if (this.cached !== null && this.now() - this.cached.issuedAt < PROVIDER_TOKEN_MAX_AGE_MS) return this.cached.jwt;
    this.pending ??= this.sign().finally(() => {
      this.pending = null;
    });
    this.cached = await this.pending;
    return this.cached.jwt;
  }

  invalidate(jwt: string): void {
    if (this.cached?.jwt === jwt) this.cached = null;
  }

  private async sign(): Promise<{ jwt: string; issuedAt: number }> {
    const issuedAt = this.now();
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.keyId })
      .setIssuer(this.teamId)
      .setIssuedAt(Math.floor(issuedAt / 1000))
      .sign(this.key);
    return { jwt, issuedAt };
  }
}
