/**
 * The ConversationStore of the SQLite driver: creation (with DIRECT deduplication), ownership
 * claims, updates, soft delete, and the listing/get views with membership and unread state.
 */
import { IdConflictError } from '../errors.ts';
import type { ConversationDetail, ConversationRecord, ConversationType, ConversationView, Page, TenantOverviewCounts, Viewer } from '../records.ts';
import { conversationPosition, pageLimit, timestampOrNow, type ConversationPosition } from '../positions.ts';
import type {
  ConversationGate,
  ConversationPatch,
  ConversationRef,
  ConversationStore,
  ConversationWrite,
  CreateConversationInput,
  ListConversationsQuery,
} from '../types-conversations.ts';
import { listSql, type ConversationRow, type ConversationsTable, type ListedRow } from './conversations.ts';
import type { DirectPairsTable } from './direct-pairs.ts';
import type { GateCache } from './gate-cache.ts';
import type { MembersTable } from './members.ts';
import type { ReadStateTable } from './read-state.ts';
import { checkEpoch, type SqliteHandle } from './shared.ts';
import { checkConversationType, checkCreate, checkPreview, conversationDetail, newConversationRecord } from '../inputs.ts';
import type Database from 'better-sqlite3';

/** Sorts after every ISO timestamp and UUID: the bound of a first page. */
const TOP = '\u{10FFFF}';

export class SqliteConversationStore implements ConversationStore {
  private readonly listStmts = new Map<string, Database.Statement<[Record<string, string | number>], ListedRow>>();

  constructor(
    private readonly h: SqliteHandle,
    private readonly table: ConversationsTable,
    private readonly members: MembersTable,
    private readonly pairs: DirectPairsTable,
    private readonly readState: ReadStateTable,
    /** Exclusive mode only (gate-cache.ts). */
    private readonly gates: GateCache | null = null,
  ) {
    for (const viewer of ['user', 'machine'] as const) {
      for (const type of [undefined, 'DIRECT', 'GROUP', 'CHANNEL'] as const) {
        this.listStmts.set(`${viewer}:${type ?? ''}`, h.db.prepare(listSql(viewer, type)));
      }
    }
  }

  async create(input: CreateConversationInput): Promise<{ conversation: ConversationRecord; created: boolean }> {
    const { users, epoch, at } = checkCreate(input);
    return this.h.write(() => {
      const existing = this.table.byId(input.conversation_id);
      if (existing) {
        const same = existing.tenant_id === input.tenant_id && existing.application_id === input.application_id && existing.type === input.type;
        if (!same) throw new IdConflictError('conversation', input.conversation_id);
        return { conversation: existing, created: false };
      }
      if (input.type === 'DIRECT') {
        const id = this.pairs.find(input, users[0]!, users[1]!);
        if (id !== null) return { conversation: this.table.byId(id)!, created: false };
      }
      const row: ConversationRow = newConversationRecord(input, epoch, at);
      this.table.insert(row);
      for (const m of input.members) this.members.insert(input, input.conversation_id, m, at);
      if (input.type === 'DIRECT') this.pairs.insert(input, users[0]!, users[1]!, input.conversation_id);
      return { conversation: row, created: true };
    });
  }

  async gate(ref: ConversationRef, user_id: string | null): Promise<ConversationGate | null> {
    // One statement is its own snapshot: no read transaction around it (the hot read path).
    return this.h.readOne(() => this.gateSync(ref, user_id));
  }

  /** Throws StoreClosedError once closed, like every read. */
  gateSync(ref: ConversationRef, user_id: string | null): ConversationGate | null {
    this.h.assertOpen();
    const gates = this.gates;
    if (gates === null) return this.table.gate(ref, user_id);
    return gates.get(ref, user_id, () => this.table.gate(ref, user_id));
  }

  async claim(ref: ConversationRef): Promise<ConversationRecord | null> {
    return this.h.write(() => this.table.claim(ref));
  }
  /** Seqs are numbered one by one here (last_seq + 1): nothing is held to give back. */
  async release(_input: ConversationWrite): Promise<void> {}


  async update(input: ConversationWrite & { patch: ConversationPatch }): Promise<ConversationRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.table.fence(input, input.epoch);
      if (!conv) return null;
      // Visibility only means something for channels (records.ts); keep DIRECT/GROUP at null.
      const patch = conv.type === 'CHANNEL' ? input.patch : withoutVisibility(input.patch);
      return this.table.update(conv.conversation_id, patch, at);
    });
  }

  async softDelete(input: ConversationWrite): Promise<ConversationRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.table.fence(input, input.epoch);
      if (!conv) return null;
      if (conv.type === 'DIRECT') this.pairs.release(conv.conversation_id);
      return this.table.softDelete(conv.conversation_id, at);
    });
  }

  async get(ref: ConversationRef, viewer: Viewer, membersPreview: number): Promise<ConversationDetail | null> {
    checkPreview(membersPreview);
    return this.h.read(() => {
      const conv = this.table.live(ref);
      if (!conv) return null;
      const membership = viewer.kind === 'user' ? this.members.get(conv.conversation_id, viewer.user_id) : null;
      const active = membership?.status === 'ACTIVE' && viewer.kind === 'user';
      const state = active ? this.readState.state(conv.conversation_id, viewer.user_id, this.readState.marker(conv.conversation_id, viewer.user_id), conv.last_seq) : null;
      return conversationDetail(conv, membership, state, this.preview(conv, membersPreview));
    });
  }

  async list(query: ListConversationsQuery): Promise<Page<ConversationView, ConversationPosition>> {
    const limit = pageLimit(query.limit);
    checkPreview(query.members_preview);
    checkConversationType(query.type);
    const after = query.after == null ? null : conversationPosition(query.after);
    const viewer = query.viewer;
    const stmt = this.listStmts.get(`${viewer.kind}:${query.type ?? ''}`)!;
    return this.h.read(() => {
      const rows = stmt.all({
        tenant_id: query.tenant_id,
        application_id: query.application_id,
        user_id: viewer.kind === 'user' ? viewer.user_id : '',
        type: query.type ?? '',
        at: after?.last_activity_at ?? TOP,
        id: after?.conversation_id ?? TOP,
        n: limit + 1,
      });
      const items = rows.slice(0, limit).map((row): ConversationView => ({
        has_unread: viewer.kind === 'user' && row.my_role !== null && this.readState.hasUnread(row.conversation_id, viewer.user_id, row.last_seq),
        members: this.preview(row, query.members_preview),
        ...row,
      }));
      const last = items[items.length - 1];
      return { items, next: rows.length > limit && last ? { last_activity_at: last.last_activity_at, conversation_id: last.conversation_id } : null };
    });
  }

  async overview(tenant_id: string): Promise<TenantOverviewCounts> {
    return this.h.read(() => {
      const counts = this.table.countsByType(tenant_id);
      const n = (t: ConversationType): number => counts.get(t) ?? 0;
      const conversations = { direct: n('DIRECT'), group: n('GROUP'), channel: n('CHANNEL'), total: n('DIRECT') + n('GROUP') + n('CHANNEL') };
      return { conversations, members: this.members.activeUsersOfTenant(tenant_id) };
    });
  }

  private preview(conv: ConversationRecord, n: number): ConversationView['members'] {
    return conv.type === 'CHANNEL' ? null : this.members.preview(conv.conversation_id, n);
  }
}

/** The patch without `visibility`, which only a CHANNEL has. */
function withoutVisibility(patch: ConversationPatch): ConversationPatch {
  const { visibility: _ignored, ...rest } = patch;
  return rest;
}
