/**
 * The `direct_pairs` table: at most one live DIRECT conversation per unordered pair of users in
 * a context. The primary key is what makes concurrent creates of one pair end in one
 * conversation: creates are serialized by the write lock, and the second finds the first's row.
 */
import type { StoreContext } from '../records.ts';
import type { Db } from './shared.ts';

/**
 * The pair in canonical order, compared as UTF-8 bytes like SQLite's BINARY collation (the
 * table's CHECK). JavaScript's `<` compares UTF-16 code units, which orders characters above
 * U+FFFF differently.
 */
export function pairOf(a: string, b: string): { user_low: string; user_high: string } {
  return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0 ? { user_low: a, user_high: b } : { user_low: b, user_high: a };
}

export class DirectPairsTable {
  private readonly findStmt;
  private readonly insertStmt;
  private readonly deleteStmt;

  constructor(db: Db) {
    this.findStmt = db
      .prepare<[string, string, string, string], string>(
        'SELECT conversation_id FROM direct_pairs WHERE tenant_id = ? AND application_id = ? AND user_low = ? AND user_high = ?',
      )
      .pluck();
    this.insertStmt = db.prepare<[string, string, string, string, string]>(
      'INSERT INTO direct_pairs (tenant_id, application_id, user_low, user_high, conversation_id) VALUES (?, ?, ?, ?, ?)',
    );
    this.deleteStmt = db.prepare<[string]>('DELETE FROM direct_pairs WHERE conversation_id = ?');
  }

  find(ctx: StoreContext, a: string, b: string): string | null {
    const { user_low, user_high } = pairOf(a, b);
    return this.findStmt.get(ctx.tenant_id, ctx.application_id, user_low, user_high) ?? null;
  }

  insert(ctx: StoreContext, a: string, b: string, conversation_id: string): void {
    const { user_low, user_high } = pairOf(a, b);
    this.insertStmt.run(ctx.tenant_id, ctx.application_id, user_low, user_high, conversation_id);
  }

  /** Frees the pair of a soft-deleted conversation. */
  release(conversation_id: string): void {
    this.deleteStmt.run(conversation_id);
  }
}
