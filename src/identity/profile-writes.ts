/**
 * Which IdP profiles this node need not write again. Every refetch of a user's context (once per
 * CHAT_IDENTITY_CACHE_TTL_MS, 30 s, per user and node) hands the node the user's profile; writing
 * it each time was one store write per active user and node every 30 s, nearly always of the same
 * values. A profile identical to the one this node wrote less than `rewriteMs` ago is skipped.
 *
 * Why a bound and not "skip while unchanged": another node may have written a newer answer since
 * (the user renamed), and the IdP may then answer this node's old values again (renamed back);
 * skipping for ever would leave the newer values stored. With the bound the stored profile is at
 * most `rewriteMs` behind in that case.
 */
import type { UserProfile } from './types.ts';

export class ProfileWrites {
  private readonly written = new Map<string, { values: string; at: number }>();

  constructor(
    private readonly rewriteMs = 5 * 60_000,
    private readonly max = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when `profile` should be written now (and remembers it as written). */
  due(tenantId: string, profile: UserProfile): boolean {
    const key = `${tenantId}\u0000${profile.user_id}`;
    const values = `${profile.display_name ?? '\u0000'}\u0000${profile.avatar_url ?? '\u0000'}`;
    const t = this.now();
    const last = this.written.get(key);
    if (last !== undefined && last.values === values && t - last.at < this.rewriteMs) return false;
    // Most recently written last: the oldest entry is the first to go past `max`.
    this.written.delete(key);
    this.written.set(key, { values, at: t });
    if (this.written.size > this.max) this.written.delete(this.written.keys().next().value!);
    return true;
  }

  /** The write failed: the next sight of the profile writes it again. */
  forget(tenantId: string, userId: string): void {
    this.written.delete(`${tenantId}\u0000${userId}`);
  }
}
