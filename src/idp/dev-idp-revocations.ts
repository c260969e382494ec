/**
 * Revoked tokens, as an append-only log the chat nodes read from a cursor.
 *
 * - An entry lives until the token's own `exp`; after that the token fails as expired anyway, so
 *   the log stays bounded by the number of revoked, still-valid tokens.
 * - The cursor is `<epoch>.<sequence>`. The epoch changes with every IdP start (the log is in
 *   memory), so a node holding a cursor from a previous run does not skip the new run's entries.
 *   A cursor from another epoch, or one that does not parse, yields every live entry: a superset
 *   is always safe because applying a revocation twice changes nothing.
 * - Listeners run synchronously inside `record`, which is how the embedded driver tells the node
 *   at once; a throwing listener is isolated from the others and from the revoking request.
 */
import { randomBytes } from 'node:crypto';
import type { RevocationEntry, RevocationPage } from '../identity/types.ts';

interface LoggedRevocation extends RevocationEntry {
  seq: number;
}

export type RevocationListener = (entry: RevocationEntry) => void;

export class RevocationLog {
  private readonly epoch = randomBytes(6).toString('base64url');
  private seq = 0;
  private entries: LoggedRevocation[] = [];
  private readonly byJti = new Map<string, number>();
  private readonly listeners = new Set<RevocationListener>();

  constructor(
    private readonly now: () => number,
    private readonly onListenerError: (err: unknown) => void,
  ) {}

  has(jti: string): boolean {
    this.prune();
    return this.byJti.has(jti);
  }

  /** Records a revocation; false when the token is already revoked or already expired. */
  record(entry: RevocationEntry): boolean {
    this.prune();
    if (this.byJti.has(entry.jti) || entry.exp <= this.nowSeconds()) return false;
    this.seq += 1;
    this.entries.push({ seq: this.seq, ...entry });
    this.byJti.set(entry.jti, entry.exp);
    for (const listener of this.listeners) {
      try {
        listener({ jti: entry.jti, exp: entry.exp });
      } catch (err) {
        this.onListenerError(err);
      }
    }
    return true;
  }

  page(after: string | null): RevocationPage {
    this.prune();
    const from = this.position(after);
    return {
      items: this.entries.filter((e) => e.seq > from).map((e) => ({ jti: e.jti, exp: e.exp })),
      cursor: `${this.epoch}.${this.seq}`,
    };
  }

  /** Returns a function that removes the listener again. */
  listen(listener: RevocationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The sequence number a cursor stands for; 0 (everything) when it is not one of ours. */
  private position(cursor: string | null): number {
    if (cursor === null) return 0;
    const m = /^([A-Za-z0-9_-]+)\.(\d{1,15})$/.exec(cursor);
    if (!m || m[1] !== this.epoch) return 0;
    const seq = Number(m[2]);
    return seq <= this.seq ? seq : 0;
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  private prune(): void {
    const now = this.nowSeconds();
    if (!this.entries.some((e) => e.exp <= now)) return;
    this.entries = this.entries.filter((e) => e.exp > now);
    for (const [jti, exp] of this.byJti) if (exp <= now) this.byJti.delete(jti);
  }
}
