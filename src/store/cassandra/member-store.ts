/**
 * The MemberStore of the Cassandra driver. A membership change that moves member_count first
 * compare-and-sets the count on the conversation row (conversations.ts), then writes the member
 * rows in one logged batch (members.ts). Count first: if the process dies in between, the count
 * is one off until the next change, whereas the other order could leave a member admitted by a
 * writer that turned out to be fenced.
 */
import type { ConversationType, MemberRecord, MemberView, Page, StoreContext } from '../records.ts';
import { memberPosition, pageLimit, timestampOrNow, type MemberPosition } from '../positions.ts';
import type { AddMemberInput, ConversationRef, ListMembersQuery, MemberStatusInput, MemberStore } from '../types-conversations.ts';
import type { ConversationRow, ConversationsTable } from './conversations.ts';
import { casLoop, RETRY, type CassandraHandle } from './cql.ts';
import { activateRows, deactivateRows, roleRows, type MembersTable } from './members.ts';
import type { CassandraProfileStore } from './profiles.ts';
import type { ReadStateTable } from './read-state.ts';
import { checkEpoch } from './validate.ts';

export class CassandraMemberStore implements MemberStore {
  constructor(
    private readonly h: CassandraHandle,
    private readonly conversations: ConversationsTable,
    private readonly table: MembersTable,
    private readonly readState: ReadStateTable,
    private readonly profiles: CassandraProfileStore,
  ) {}

  async add(input: AddMemberInput): Promise<{ member: MemberRecord; changed: boolean } | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, () =>
      casLoop('members.add', async () => {
        const conv = await this.conversations.fence(input, input.epoch);
        if (!conv) return null;
        const row = await this.table.get(conv.conversation_id, input.user_id);
        if (row?.status === 'ACTIVE') return { member: row, changed: false };
        const counted = await this.count(conv, input.epoch, +1);
        if (counted !== 'ok') return counted === 'gone' ? null : RETRY;
        const member: MemberRecord = {
          member_id: row?.member_id ?? input.member_id,
          conversation_id: conv.conversation_id,
          user_id: input.user_id,
          role: input.role,
          status: 'ACTIVE',
          joined_at: at,
          updated_at: at,
        };
        await this.h.batch(activateRows(conv, member, row));
        // History from before joining is not unread.
        await this.readState.advance(conv.conversation_id, input.user_id, conv.last_seq, at);
        return { member, changed: true };
      }),
    );
  }

  async setStatus(input: MemberStatusInput): Promise<{ member: MemberRecord; changed: boolean } | null> {
    checkEpoch(input.epoch);
    if (input.status !== 'LEFT' && input.status !== 'REMOVED') throw new RangeError(`status must be LEFT or REMOVED (got ${String(input.status)})`);
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, () =>
      casLoop('members.setStatus', async () => {
        const conv = await this.conversations.fence(input, input.epoch);
        const row = conv ? await this.table.get(conv.conversation_id, input.user_id) : null;
        if (!conv || !row) return null;
        if (row.status !== 'ACTIVE') return { member: row, changed: false };
        const counted = await this.count(conv, input.epoch, -1);
        if (counted !== 'ok') return counted === 'gone' ? null : RETRY;
        await this.h.batch(deactivateRows(conv, input.user_id, input.status, at));
        return { member: Object.assign({}, row, { status: input.status, updated_at: at }), changed: true };
      }),
    );
  }

  async setRole(input: Parameters<MemberStore['setRole']>[0]): Promise<MemberRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, async () => {
      const conv = await this.conversations.fence(input, input.epoch);
      const row = conv ? await this.table.get(conv.conversation_id, input.user_id) : null;
      if (!conv || row?.status !== 'ACTIVE') return null;
      if (row.role === input.role) return row;
      await this.h.batch(roleRows(conv, input.user_id, input.role, at));
      return Object.assign({}, row, { role: input.role, updated_at: at });
    });
  }

  async get(ref: ConversationRef, user_id: string): Promise<MemberRecord | null> {
    return this.h.op(async () => ((await this.conversations.live(ref)) ? this.table.get(ref.conversation_id, user_id) : null));
  }

  async list(query: ListMembersQuery): Promise<Page<MemberView, MemberPosition> | null> {
    const limit = pageLimit(query.limit);
    const after = query.after == null ? null : memberPosition(query.after);
    return this.h.op(async () => {
      const conv = await this.conversations.live(query);
      if (!conv) return null;
      const rows = await this.table.page(conv.conversation_id, query.include_inactive !== true, after, limit + 1);
      const page = rows.slice(0, limit);
      const profiles = new Map((await this.profiles.read(conv.tenant_id, page.map((m) => m.user_id))).map((p) => [p.user_id, p]));
      const items = page.map((m): MemberView => Object.assign({}, m, { display_name: profiles.get(m.user_id)?.display_name ?? null, avatar_url: profiles.get(m.user_id)?.avatar_url ?? null }));
      const last = items[items.length - 1];
      return { items, next: rows.length > limit && last ? { joined_at: last.joined_at, member_id: last.member_id } : null };
    });
  }

  async filterActive(ref: ConversationRef, user_ids: readonly string[]): Promise<string[]> {
    return this.h.op(async () => {
      if (user_ids.length === 0 || !(await this.conversations.live(ref))) return [];
      return (await this.table.getMany(ref.conversation_id, user_ids)).filter((m) => m.status === 'ACTIVE').map((m) => m.user_id);
    });
  }

  async conversationIdsOf(ctx: StoreContext, user_id: string, type?: ConversationType): Promise<string[]> {
    return this.h.op(async () => {
      const mine = (await this.table.ofUser(ctx, user_id)).filter((m) => type === undefined || m.type === type);
      // The per-user rows are removed with the conversation; confirming keeps a lost removal invisible.
      const live = await Promise.all(mine.map((m) => this.conversations.live({ conversation_id: m.conversation_id, ...ctx })));
      return mine.filter((_, i) => live[i] != null).map((m) => m.conversation_id).sort();
    });
  }

  private count(conv: ConversationRow, epoch: number, delta: number): Promise<'ok' | 'gone' | 'moved'> {
    return this.conversations.setMemberCount(conv, epoch, conv.member_count + delta);
  }
}
