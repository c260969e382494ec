/**
 * A memo of `conversations.gate` answers, for the exclusive mode of the SQLite driver.
 *
 * The gate (the access check of every history and member read, and of each realtime connect)
 * is one primary-key read, but in WAL mode every statement outside a transaction also takes and
 * drops a read lock in the shared-memory index (~3 µs of the ~7 µs). History reads repeat the
 * same few gates far more often than conversations change, so answers are kept here.
 *
 * Never stale: TEMP triggers on this connection call `chat_gate_touch(conversation_id)` for every
 * row inserted, updated or deleted in `conversations` or `members`, from any statement, trigger
 * programs included (the revision triggers of migration 002 update `conversations`, so every
 * message, reaction and retention write touches it too). A touch drops the conversation's
 * answers before the write's transaction ends; reads never run inside a write batch (both are
 * synchronous on the one thread), so no read can cache a state a later commit changed without
 * a touch. A rolled-back write only drops answers that were still right: harmless.
 *
 * Only for exclusive mode: TEMP triggers see this connection's writes alone, and in shared-file
 * mode other processes write the same file. Bounded: at most `maxAnswers` answers in all (about
 * 200 bytes each; the conversations cached first go out first) and `maxPerConversation` each.
 */
import type { MemberStatus } from '../records.ts';
import type { ConversationGate, ConversationRef } from '../types-conversations.ts';
import type { Db } from './shared.ts';

const TOUCH = 'chat_gate_touch';

/** The temp triggers: every kind of row change in the two tables a gate answer depends on. */
function triggerSql(): string {
  const on = (table: string, event: 'INSERT' | 'UPDATE' | 'DELETE'): string => {
    const row = event === 'DELETE' ? 'OLD' : 'NEW';
    // An UPDATE could move a row to another conversation id: touch both.
    const also = event === 'UPDATE' ? `, ${TOUCH}(OLD.conversation_id)` : '';
    return `CREATE TEMP TRIGGER IF NOT EXISTS gate_cache_${table}_${event.toLowerCase()} AFTER ${event} ON main.${table}
      BEGIN SELECT ${TOUCH}(${row}.conversation_id)${also}; END;`;
  };
  return ['conversations', 'members'].flatMap((t) => (['INSERT', 'UPDATE', 'DELETE'] as const).map((e) => on(t, e))).join('\n');
}

export interface GateCacheStats {
  hits: number;
  misses: number;
  touches: number;
}

export class GateCache {
  /** conversation_id -> (tenant|application|user -> answer; null: no live conversation there). */
  private readonly entries = new Map<string, Map<string, ConversationGate | null>>();
  /** Answers held, over every conversation. */
  private answers = 0;
  readonly stats: GateCacheStats = { hits: 0, misses: 0, touches: 0 };

  constructor(
    db: Db,
    private readonly maxAnswers = 100_000,
    private readonly maxPerConversation = 256,
  ) {
    db.function(TOUCH, { deterministic: false, varargs: true }, (...ids: unknown[]) => {
      for (const id of ids) if (typeof id === 'string') this.drop(id);
      this.stats.touches += 1;
      return null;
    });
    db.exec(triggerSql());
  }

  /** The cached answer, or `read()`'s, kept. */
  get(ref: ConversationRef, user_id: string | null, read: () => ConversationGate | null): ConversationGate | null {
    const key = `${ref.tenant_id}|${ref.application_id}|${user_id ?? ''}`;
    let answers = this.entries.get(ref.conversation_id);
    const cached = answers?.get(key);
    if (cached !== undefined) {
      this.stats.hits += 1;
      return cached;
    }
    this.stats.misses += 1;
    const answer = read();
    const kept = answer === null ? null : freeze(answer);
    if (answers === undefined) {
      answers = new Map();
      this.entries.set(ref.conversation_id, answers);
    } else if (answers.size >= this.maxPerConversation) {
      this.answers -= answers.size;
      answers.clear();
    }
    answers.set(key, kept);
    this.answers += 1;
    // Over the bound: the conversations cached first go (never the one just kept).
    while (this.answers > this.maxAnswers) {
      const oldest = this.entries.keys().next().value!;
      if (oldest === ref.conversation_id) break;
      this.drop(oldest);
    }
    return kept;
  }

  private drop(conversation_id: string): void {
    const answers = this.entries.get(conversation_id);
    if (answers === undefined) return;
    this.answers -= answers.size;
    this.entries.delete(conversation_id);
  }

  /** Answers held. */
  get size(): number {
    return this.answers;
  }
}

/** Answers are shared between callers: none may change one. */
function freeze(g: ConversationGate): ConversationGate {
  Object.freeze(g.conversation);
  return Object.freeze(g) as ConversationGate & { member_status: MemberStatus | null };
}
