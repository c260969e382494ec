/**
 * The `direct_pairs` table: at most one live DIRECT conversation per unordered pair of users in
 * a context. SQLite gets this from a primary key under its write lock; here it is a lightweight
 * transaction: `INSERT ... IF NOT EXISTS` on the pair's partition, so of any number of concurrent
 * creates exactly one wins, and every loser is answered the winner's conversation_id.
 * Releasing (soft delete) and taking over an abandoned pair are compare-and-set on the id.
 */
import type { StoreContext } from '../records.ts';
import { cql, type CassandraHandle } from './cql.ts';
import { strOrNull } from './rows.ts';

const PAIR = 'tenant_id = ? AND application_id = ? AND user_low = ? AND user_high = ?';

export const DIRECT_PAIRS_CQL = {
  claim: cql('INSERT INTO direct_pairs (tenant_id, application_id, user_low, user_high, conversation_id) VALUES (?, ?, ?, ?, ?) IF NOT EXISTS'),
  takeOver: cql(`UPDATE direct_pairs SET conversation_id = ? WHERE ${PAIR} IF conversation_id = ?`),
  release: cql(`DELETE FROM direct_pairs WHERE ${PAIR} IF conversation_id = ?`),
};

/** The pair in canonical order, by UTF-8 bytes (Cassandra's text order, as in the SQLite driver). */
export function pairOf(a: string, b: string): { user_low: string; user_high: string } {
  return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0 ? { user_low: a, user_high: b } : { user_low: b, user_high: a };
}

export class DirectPairsTable {
  constructor(private readonly h: CassandraHandle) {}

  private key(ctx: StoreContext, a: string, b: string): string[] {
    const { user_low, user_high } = pairOf(a, b);
    return [ctx.tenant_id, ctx.application_id, user_low, user_high];
  }

  /** Takes the pair for `conversation_id`; answers the id holding it (ours when we won). */
  async claim(ctx: StoreContext, a: string, b: string, conversation_id: string): Promise<string> {
    const { applied, current } = await this.h.lwt(DIRECT_PAIRS_CQL.claim, [...this.key(ctx, a, b), conversation_id]);
    return applied ? conversation_id : (strOrNull(current, 'conversation_id') ?? conversation_id);
  }

  /** Replaces a holder that turned out dead or deleted; answers the id now holding the pair. */
  async takeOver(ctx: StoreContext, a: string, b: string, from: string, to: string): Promise<string | null> {
    const { applied, current } = await this.h.lwt(DIRECT_PAIRS_CQL.takeOver, [to, ...this.key(ctx, a, b), from]);
    return applied ? to : strOrNull(current, 'conversation_id');
  }

  /** Frees the pair if `conversation_id` still holds it. */
  async release(ctx: StoreContext, a: string, b: string, conversation_id: string): Promise<void> {
    await this.h.lwt(DIRECT_PAIRS_CQL.release, [...this.key(ctx, a, b), conversation_id]);
  }
}
