/**
 * A memo of `conversations.gate` answers, for the exclusive mode of the SQLite driver.
 *
 * The gate (the access check of every history and member read, and of each realtime connect)
 * is one primary-key read, but in WAL mode every statement outside a transaction also takes and
 * drops a read lock in the shared-memory index (~3 µs of the ~7 µs). History reads repeat the
 * same few gates far more often than conversations change, so answers are kept here.
 *
 * Never stale (trigger-memo.ts): TEMP triggers on `conversations` and `members` drop a
 * conversation's answers at every row change, trigger programs included (the revision triggers
 * of migration 002 update `conversations`, so every message, reaction and retention write
 * counts too). Exclusive mode only. Bounded: at most `maxAnswers` answers in all (about 200
 * bytes each; the conversations cached first go out first) and `maxPerConversation` each.
 */
import type { ConversationGate, ConversationRef } from '../types-conversations.ts';
import type { Db } from './shared.ts';
import { TriggerMemo, type TriggerMemoStats } from './trigger-memo.ts';

export type GateCacheStats = TriggerMemoStats;


export class GateCache {
  /** Grouped by conversation; keyed by tenant|application|user (null answer: no live conversation there). */
  private readonly memo: TriggerMemo<ConversationGate | null>;

  /** `db` null: no triggers, invalidated through `memo.touch` (the writer thread's reports). */
  constructor(db: Db | null, maxAnswers = 100_000, maxPerConversation = 256, onTouch?: (fn: string, group: string) => void) {
    this.memo = new TriggerMemo(db, { fn: 'chat_gate_touch', tables: ['conversations', 'members'], group: (row) => `${row}.conversation_id` }, maxAnswers, maxPerConversation, onTouch);
  }

  /** The memo's name in the writer thread's reports. */
  get name(): string {
    return this.memo.name;
  }

  /** Drops a conversation's answers (a change reported by the writer thread). */
  touch(conversation_id: string): void {
    this.memo.touch(conversation_id);
  }

  get stats(): Readonly<GateCacheStats> {
    return this.memo.stats;
  }

  /** The cached answer, or `read()`'s, kept. */
  get(ref: ConversationRef, user_id: string | null, read: () => ConversationGate | null): ConversationGate | null {
    return this.memo.get(ref.conversation_id, `${ref.tenant_id}|${ref.application_id}|${user_id ?? ''}`, () => {
      const answer = read();
      return answer === null ? null : freeze(answer);
    });
  }

  /** Answers held. */
  get size(): number {
    return this.memo.size;
  }
}

/** Answers are shared between callers: none may change one. */
function freeze(g: ConversationGate): ConversationGate {
  Object.freeze(g.conversation);
  return Object.freeze(g);
}
