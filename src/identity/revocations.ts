/**
 * Revoked token ids known to this node.
 *
 * How revocation reaches the node (docs/identity-provider.md): the IdP records `{jti, exp}` when a
 * token is revoked (RFC 7009 endpoint). The embedded IdP tells the node at once (`onRevocation`);
 * over HTTP the node polls `GET /directory/revocations?after=<cursor>` every
 * CHAT_REVOCATION_POLL_MS. An entry is kept until the token's own expiry, after which the token is
 * refused as expired anyway. Every request checks this set, also when its token is cached.
 */
import type { IdentityDirectory, RevocationEntry } from './types.ts';
import type { Logger } from '../log/index.ts';

export class RevocationList {
  private readonly revoked = new Map<string, number>();
  private cursor: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    private readonly directory: IdentityDirectory,
    private readonly pollMs: number,
    private readonly log: Logger,
  ) {}

  has(jti: string | null): boolean {
    return jti !== null && this.revoked.has(jti);
  }

  add(entry: RevocationEntry): void {
    if (entry.exp * 1000 > Date.now()) this.revoked.set(entry.jti, entry.exp);
  }

  /** Loads what is already revoked, then keeps up: pushed entries, or polling over HTTP. */
  async start(): Promise<void> {
    if (this.directory.onRevocation) this.directory.onRevocation((e) => this.add(e));
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const page = await this.directory.revocations(this.cursor);
      for (const e of page.items) this.add(e);
      this.cursor = page.cursor;
      this.prune();
    } catch (err) {
      // The IdP may be down; tokens keep working until it answers again, and the next poll
      // catches up from the same cursor.
      this.log.warn({ err: (err as Error).message }, 'revocation poll failed');
    } finally {
      this.polling = false;
    }
  }

  private prune(): void {
    const nowSec = Date.now() / 1000;
    for (const [jti, exp] of this.revoked) if (exp <= nowSec) this.revoked.delete(jti);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
