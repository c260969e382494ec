/**
 * The MessageStore of the SQLite driver: each write is one op of the group commit (batcher.ts),
 * starting with the conversation's fencing check.
 */
import { IdConflictError, SeqConflictError } from '../errors.ts';
import type { MessageRecord, MessageView, Page } from '../records.ts';
import { messagePosition, pageLimit, timestampOrNow, type MessagePosition } from '../positions.ts';
import type { ConversationRef } from '../types-conversations.ts';
import type { AppendMessageInput, ListMessagesQuery, MessageStore, MessageWrite, RetentionInput } from '../types-messages.ts';
import type { ConversationsTable } from './conversations.ts';
import { toView, type MessagesTable } from './messages.ts';
import type { ReactionsTable } from './reactions.ts';
import { checkEpoch, type SqliteHandle } from './shared.ts';
import { checkAppend, checkRetention } from '../inputs.ts';


/** A UNIQUE, PRIMARY KEY or FOREIGN KEY violation (better-sqlite3's SqliteError codes). */
function isConstraintError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT');
}

export class SqliteMessageStore implements MessageStore {
  constructor(
    private readonly h: SqliteHandle,
    private readonly conversations: ConversationsTable,
    private readonly table: MessagesTable,
    private readonly reactions: ReactionsTable,
  ) {}

  async append(input: AppendMessageInput): Promise<{ message: MessageRecord; created: boolean } | null> {
    const at = checkAppend(input);
    return this.h.write(() => {
      // Hot path, two statements: the INSERT (the unique indexes and the foreign key check id,
      // seq and conversation), then fencing and advancing in one UPDATE. Anything unusual — a
      // retried id, a taken seq, a missing, deleted or fenced conversation — takes the careful
      // path below, which answers the contract's outcome; the op's savepoint (batcher.ts) undoes
      // the INSERT when a fencing error is thrown.
      let message: MessageRecord;
      try {
        message = this.table.insert(input, at);
      } catch (error) {
        if (!isConstraintError(error)) throw error;
        return this.appendCarefully(input, at);
      }
      if (this.conversations.fencedAdvance(input, input.epoch, input.seq, at)) return { message, created: true };
      this.table.remove(input.message_id);
      const conv = this.conversations.fence(input, input.epoch); // throws StaleEpochError when fenced
      if (!conv) return null;
      return this.appendCarefully(input, at);
    });
  }

  /** The append with every check made by reading first (inside the same op). */
  private appendCarefully(input: AppendMessageInput, at: string): { message: MessageRecord; created: boolean } | null {
    const conv = this.conversations.fence(input, input.epoch);
    if (!conv) return null;
    const existing = this.table.byIdStmt.get(input.message_id);
    if (existing) {
      // A retry answers what the first attempt stored; the same id elsewhere is a collision.
      if (existing.conversation_id !== conv.conversation_id) throw new IdConflictError('message', input.message_id);
      return { message: this.table.inConversation(conv.conversation_id, input.message_id)!, created: false };
    }
    if (this.table.seqHolder(conv.conversation_id, input.seq) !== null) throw new SeqConflictError(conv.conversation_id, input.seq);
    const message = this.table.insert(input, at);
    this.conversations.advance(conv.conversation_id, input.seq, at);
    return { message, created: true };
  }

  async edit(input: MessageWrite & { body: string; mentioned_user_ids?: string[] }): Promise<MessageRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.conversations.fence(input, input.epoch);
      const message = conv ? this.table.inConversation(conv.conversation_id, input.message_id) : null;
      if (!message || message.status === 'DELETED') return message;
      return this.table.edit(input.message_id, input.body, input.mentioned_user_ids, at);
    });
  }

  async tombstone(input: MessageWrite): Promise<MessageRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.conversations.fence(input, input.epoch);
      const message = conv ? this.table.inConversation(conv.conversation_id, input.message_id) : null;
      if (!message || message.status === 'DELETED') return message;
      this.reactions.clear(input.message_id);
      return this.table.tombstone(input.message_id, at);
    });
  }

  async get(ref: ConversationRef, message_id: string, viewer_user_id: string | null): Promise<MessageView | null> {
    return this.h.read(() => {
      const row = this.conversations.live(ref) ? this.table.view(ref.conversation_id, message_id) : null;
      if (!row) return null;
      return toView(row, this.reactions.summaries([message_id], viewer_user_id).get(message_id) ?? []);
    });
  }

  async list(query: ListMessagesQuery): Promise<Page<MessageView, MessagePosition> | null> {
    const limit = pageLimit(query.limit);
    const before = query.after == null ? Number.MAX_SAFE_INTEGER : messagePosition(query.after).seq;
    return this.h.read(() => {
      if (!this.conversations.live(query)) return null;
      const rows = this.table.history(query.conversation_id, before, limit + 1);
      const page = rows.slice(0, limit);
      const reactions = this.reactions.summaries(
        page.map((r) => r.message_id),
        query.viewer_user_id,
      );
      const items = page.map((r) => toView(r, reactions.get(r.message_id) ?? []));
      const last = items[items.length - 1];
      return { items, next: rows.length > limit && last ? { seq: last.seq } : null };
    });
  }

  async deleteExpired(input: RetentionInput): Promise<number> {
    const { batch, cutoff } = checkRetention(input);
    let total = 0;
    let after = '';
    for (;;) {
      // One transaction per batch: between two, queued actor writes get their turn.
      const step = await this.h.write(() => this.table.expireSome(input.tenant_id, cutoff, after, batch));
      total += step.deleted;
      after = step.after;
      if (step.done) return total;
    }
  }
}
