/**
 * Conversation views: the listing (machine and user), the members preview and the unread flags.
 *
 * Machine listing: a walk of conversations_by_activity (or _by_type_activity) from the position,
 * each key confirmed against its conversation row (see activity.ts). User listing, as in the
 * SQLite driver, is two halves merged: the user's ACTIVE memberships in the context
 * (memberships_by_user, one partition), whose conversation rows are read and sorted by activity
 * (the cost is the user's conversations in the context), and PUBLIC channels in activity order
 * (public_channels_by_activity) that the user is not in; each half is cut at limit + 1.
 */
import type { ConversationType, ConversationView, MemberRole, Page, ProfileSummary, StoreContext, Viewer } from '../records.ts';
import type { ConversationPosition } from '../positions.ts';
import { isPublicChannel, readKeys, unindexRows, type ActivityKind } from './activity.ts';
import { publicRecord, type ConversationRow, type ConversationsTable } from './conversations.ts';
import type { CassandraHandle } from './cql.ts';
import type { MembersTable } from './members.ts';
import type { CassandraProfileStore } from './profiles.ts';
import type { ReadStateTable } from './read-state.ts';

type Listed = { conv: ConversationRow; my_role: MemberRole | null };

/** Listing order: last_activity_at DESC, conversation_id DESC. */
export function byActivity(a: ConversationPosition, b: ConversationPosition): number {
  if (a.last_activity_at !== b.last_activity_at) return a.last_activity_at > b.last_activity_at ? -1 : 1;
  return a.conversation_id > b.conversation_id ? -1 : a.conversation_id < b.conversation_id ? 1 : 0;
}

/** Whether `c` comes after the position in listing order. */
export function isAfter(c: ConversationPosition, after: ConversationPosition | null): boolean {
  return after === null || byActivity(after, c) < 0;
}

export class ConversationViews {
  constructor(
    private readonly h: CassandraHandle,
    private readonly conversations: ConversationsTable,
    private readonly members: MembersTable,
    private readonly readState: ReadStateTable,
    private readonly profiles: CassandraProfileStore,
  ) {}

  async list(ctx: StoreContext, viewer: Viewer, type: ConversationType | undefined, after: ConversationPosition | null, limit: number, preview: number): Promise<Page<ConversationView, ConversationPosition>> {
    const want = limit + 1;
    let rows: Listed[];
    if (viewer.kind === 'machine') {
      const which: ActivityKind = type === undefined ? { kind: 'all' } : { kind: 'typed', type };
      rows = (await this.walk(ctx, which, after, want, () => true)).map((conv) => ({ conv, my_role: null }));
    } else {
      const memberships = await this.members.ofUser(ctx, viewer.user_id);
      const mineIds = new Set(memberships.map((m) => m.conversation_id));
      const wanted = memberships.filter((m) => type === undefined || m.type === type);
      const convs = await Promise.all(wanted.map((m) => this.conversations.live({ conversation_id: m.conversation_id, ...ctx })));
      const mine: Listed[] = [];
      for (const [i, m] of wanted.entries()) {
        const conv = convs[i];
        if (conv && isAfter(conv, after)) mine.push({ conv, my_role: m.role });
      }
      mine.sort((a, b) => byActivity(a.conv, b.conv));
      const publicHalf =
        type === undefined || type === 'CHANNEL'
          ? (await this.walk(ctx, { kind: 'public' }, after, want, (c) => isPublicChannel(c) && !mineIds.has(c.conversation_id))).map((conv) => ({ conv, my_role: null }))
          : [];
      rows = [...mine.slice(0, want), ...publicHalf].sort((a, b) => byActivity(a.conv, b.conv)).slice(0, want);
    }
    const page = rows.slice(0, limit);
    const items = await Promise.all(
      page.map(async ({ conv, my_role }): Promise<ConversationView> => ({
        my_role,
        has_unread: viewer.kind === 'user' && my_role !== null && (await this.readState.hasUnread(conv.conversation_id, viewer.user_id, conv.last_seq)),
        members: await this.preview(conv, preview),
        ...publicRecord(conv),
      })),
    );
    const last = items[items.length - 1];
    return { items, next: rows.length > limit && last ? { last_activity_at: last.last_activity_at, conversation_id: last.conversation_id } : null };
  }

  /** First ACTIVE members with profiles for DIRECT/GROUP; null for CHANNEL. */
  async preview(conv: ConversationRow, n: number): Promise<ProfileSummary[] | null> {
    if (conv.type === 'CHANNEL') return null;
    if (n === 0) return [];
    const members = await this.members.page(conv.conversation_id, true, null, n);
    const profiles = new Map((await this.profiles.read(conv.tenant_id, members.map((m) => m.user_id))).map((p) => [p.user_id, p]));
    return members.map((m) => ({ user_id: m.user_id, display_name: profiles.get(m.user_id)?.display_name ?? null, avatar_url: profiles.get(m.user_id)?.avatar_url ?? null }));
  }

  /**
   * Up to `want` live conversations from a listing table, in order, after `after`. Keys are read
   * in chunks and confirmed against the conversation rows; a key that is not the conversation's
   * current one (left by a lost batch) is skipped and deleted. A key whose conversation row does
   * not exist yet is skipped but kept: it may belong to a create in progress (conversation-store).
   */
  private async walk(ctx: StoreContext, which: ActivityKind, after: ConversationPosition | null, want: number, accept: (c: ConversationRow) => boolean): Promise<ConversationRow[]> {
    const out: ConversationRow[] = [];
    let cursor = after;
    const chunk = Math.min(Math.max(want, 16), 1000);
    for (;;) {
      const keys = await readKeys(this.h, ctx, which, cursor, chunk);
      const rows = await Promise.all(keys.map((k) => this.conversations.byId(k.conversation_id)));
      const stale = [];
      for (const [i, key] of keys.entries()) {
        const row = rows[i];
        if (!row || row.tenant_id !== ctx.tenant_id || row.application_id !== ctx.application_id) continue;
        const current = row.deleted_at === null && row.last_activity_at === key.last_activity_at;
        if (!current) {
          if (row.deleted_at !== null || row.last_activity_at > key.last_activity_at) stale.push(...unindexRows(row, key.last_activity_at));
          continue;
        }
        if (accept(row)) out.push(row);
        if (out.length >= want) break;
      }
      if (stale.length > 0) await this.h.batch(stale);
      if (out.length >= want || keys.length < chunk) return out;
      cursor = keys[keys.length - 1]!;
    }
  }
}
