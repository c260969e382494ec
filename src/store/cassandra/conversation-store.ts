/**
 * The ConversationStore of the Cassandra driver: creation (with DIRECT deduplication), claims,
 * updates, soft delete, and the get/list views (conversation-listing.ts).
 *
 * create writes the derived rows (members, listings) first and the conversation row LAST, with
 * INSERT IF NOT EXISTS: that insert is the commit point. Every reader starts from or confirms
 * against the conversation row, so a create that dies half-way leaves rows nobody shows, and a
 * retry (same id) writes the same rows again and then commits. For DIRECT, the pair is taken
 * first (direct-pairs.ts); a loser waits for the winner's row to appear and answers it.
 */
import { IdConflictError, StaleEpochError } from '../errors.ts';
import type { ConversationDetail, ConversationRecord, ConversationView, Page, TenantOverviewCounts, Viewer } from '../records.ts';
import { conversationPosition, pageLimit, timestampOrNow, type ConversationPosition } from '../positions.ts';
import type { ConversationGate, ConversationPatch, ConversationRef, ConversationStore, ConversationWrite, CreateConversationInput, ListConversationsQuery } from '../types-conversations.ts';
import { ACTIVITY_CQL, indexRows, isPublicChannel, tenantRow, unindexRows, untenantRow, type Mutation } from './activity.ts';
import type { ConversationViews } from './conversation-listing.ts';
import { classify, CONVERSATIONS_CQL, newRow, publicRecord, type ConversationRow, type ConversationsTable } from './conversations.ts';
import { casLoop, RETRY, UNSET, type CassandraHandle } from './cql.ts';
import type { DirectPairsTable } from './direct-pairs.ts';
import { activateRows, unlistRows, type MembersTable } from './members.ts';
import type { ReadStateTable } from './read-state.ts';
import { str, ts } from './rows.ts';
import type { SeqLeases } from './seq-leases.ts';
import { checkEpoch, checkPreview } from './validate.ts';
import { checkConversationType, checkCreate, conversationDetail, gistOf, newConversationRecord } from '../inputs.ts';

/** How long a DIRECT create that lost the pair waits for the winner's conversation row. */
const PAIR_WAIT_MS = [10, 20, 40, 80, 160, 320, 640, 1280];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class CassandraConversationStore implements ConversationStore {
  constructor(
    private readonly h: CassandraHandle,
    private readonly table: ConversationsTable,
    private readonly members: MembersTable,
    private readonly pairs: DirectPairsTable,
    private readonly readState: ReadStateTable,
    private readonly views: ConversationViews,
    private readonly leases: SeqLeases,
  ) {}

  /** Two single-partition reads in parallel: the conversation row and the member row. */
  async gate(ref: ConversationRef, user_id: string | null): Promise<ConversationGate | null> {
    return this.h.op(async () => {
      const [conv, member] = await Promise.all([this.table.live(ref), user_id === null ? null : this.members.get(ref.conversation_id, user_id)]);
      return conv ? { conversation: gistOf(publicRecord(conv)), member_status: member?.status ?? null } : null;
    });
  }

  async create(input: CreateConversationInput): Promise<{ conversation: ConversationRecord; created: boolean }> {
    const { users, epoch, at } = checkCreate(input);
    return this.h.serial(input.conversation_id, async () => {
      const existing = await this.existing(input);
      if (existing) return existing;
      if (input.type === 'DIRECT') {
        const other = await this.takePair(input, users[0]!, users[1]!);
        if (other) return { conversation: publicRecord(other), created: false };
      }
      const row: ConversationRow = newRow(newConversationRecord(input, epoch, at));
      const derived: Mutation[] = [...indexRows(row, at), tenantRow(row)];
      for (const m of input.members) {
        derived.push(...activateRows(row, { conversation_id: row.conversation_id, status: 'ACTIVE', joined_at: at, updated_at: at, ...m }, null));
      }
      await this.h.batch(derived);
      if (await this.table.insert(row)) return { conversation: publicRecord(row), created: true };
      // A concurrent create of the same id committed first: answer it like a retry.
      return (await this.existing(input)) ?? { conversation: publicRecord(row), created: false };
    });
  }

  /** The next epoch and the first seq range in one LWT (seq-leases.ts). */
  async claim(ref: ConversationRef): Promise<ConversationRecord | null> {
    return this.h.serial(ref.conversation_id, async () => {
      const row = await this.leases.claim(ref);
      return row ? publicRecord(row) : null;
    });
  }

  /** Hands back the seqs the holder of `epoch` never used (one LWT), after its appends settled. */
  async release(input: ConversationWrite): Promise<void> {
    checkEpoch(input.epoch);
    return this.h.serial(input.conversation_id, () => this.leases.release(input.conversation_id, input.epoch));
  }

  async update(input: ConversationWrite & { patch: ConversationPatch }): Promise<ConversationRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, () =>
      casLoop('update', async () => {
        const conv = await this.fenceRead(input);
        if (!conv) return null;
        // Visibility only means something for channels (records.ts); keep DIRECT/GROUP at null.
        const { visibility: _ignored, ...notChannel } = input.patch;
        const patch: ConversationPatch = conv.type === 'CHANNEL' ? input.patch : notChannel;
        const field = <K extends keyof ConversationPatch>(k: K): unknown => (patch[k] === undefined ? UNSET : patch[k]);
        const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.update, [
          input.epoch, field('name'), field('description'), field('visibility'), field('status'), ts(at), conv.conversation_id, input.epoch,
        ]);
        if (!applied) return classify(conv.conversation_id, input.epoch, current) === 'gone' ? null : RETRY;
        const next: ConversationRow = Object.assign({}, conv, { epoch: input.epoch, updated_at: at });
        for (const k of ['name', 'description', 'visibility', 'status'] as const) {
          if (patch[k] !== undefined) Object.assign(next, { [k]: patch[k] });
        }
        if (isPublicChannel(conv) !== isPublicChannel(next)) {
          const key = [conv.tenant_id, conv.application_id, ts(conv.last_activity_at), conv.conversation_id];
          await this.h.batch([[isPublicChannel(next) ? ACTIVITY_CQL.insertPublic : ACTIVITY_CQL.deletePublic, key]]);
        }
        return publicRecord(next);
      }),
    );
  }

  async softDelete(input: ConversationWrite): Promise<ConversationRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, () =>
      casLoop('softDelete', async () => {
        const conv = await this.fenceRead(input);
        if (!conv) return null;
        const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.softDelete, [input.epoch, ts(at), ts(at), conv.conversation_id, input.epoch]);
        if (!applied) return classify(conv.conversation_id, input.epoch, current) === 'gone' ? null : RETRY;
        const members = await this.members.all(conv.conversation_id);
        const cleanup: Mutation[] = [...unindexRows(conv, conv.last_activity_at), untenantRow(conv)];
        for (const m of members) if (m.status === 'ACTIVE') cleanup.push(...unlistRows(conv, m.user_id));
        await this.h.batch(cleanup);
        if (conv.type === 'DIRECT' && members.length === 2) await this.pairs.release(conv, members[0]!.user_id, members[1]!.user_id, conv.conversation_id);
        return publicRecord(Object.assign({}, conv, { epoch: input.epoch, deleted_at: at, updated_at: at }));
      }),
    );
  }

  async get(ref: ConversationRef, viewer: Viewer, membersPreview: number): Promise<ConversationDetail | null> {
    checkPreview(membersPreview);
    return this.h.op(async () => {
      const conv = await this.table.live(ref);
      if (!conv) return null;
      const membership = viewer.kind === 'user' ? await this.members.get(conv.conversation_id, viewer.user_id) : null;
      const active = viewer.kind === 'user' && membership?.status === 'ACTIVE';
      const state = active
        ? await this.readState.state(conv.conversation_id, viewer.user_id, await this.readState.marker(conv.conversation_id, viewer.user_id), conv.last_seq)
        : null;
      return conversationDetail(publicRecord(conv), membership, state, await this.views.preview(conv, membersPreview));
    });
  }

  async list(query: ListConversationsQuery): Promise<Page<ConversationView, ConversationPosition>> {
    const limit = pageLimit(query.limit);
    checkPreview(query.members_preview);
    checkConversationType(query.type);
    const after = query.after == null ? null : conversationPosition(query.after);
    return this.h.op(() => this.views.list(query, query.viewer, query.type, after, limit, query.members_preview));
  }

  async overview(tenant_id: string): Promise<TenantOverviewCounts> {
    return this.h.op(async () => {
      const counts = { direct: 0, group: 0, channel: 0, total: 0 };
      for (const r of await this.h.rows(ACTIVITY_CQL.typesOfTenant, [tenant_id])) {
        const t = str(r, 'type').toLowerCase() as 'direct' | 'group' | 'channel';
        counts[t] += 1;
        counts.total += 1;
      }
      return { conversations: counts, members: await this.members.activeUsersOfTenant(tenant_id) };
    });
  }

  /** A conversation already stored under the input's id: a retry, or IdConflictError. */
  private async existing(input: CreateConversationInput): Promise<{ conversation: ConversationRecord; created: false } | null> {
    const row = await this.table.byId(input.conversation_id);
    if (!row) return null;
    const same = row.tenant_id === input.tenant_id && row.application_id === input.application_id && row.type === input.type;
    if (!same) throw new IdConflictError('conversation', input.conversation_id);
    return { conversation: publicRecord(row), created: false };
  }

  /**
   * Takes the DIRECT pair for this create. Answers the live conversation that holds it instead
   * (the create then answers that one), or null when this create now holds the pair. A holder
   * whose row never appears (its create died) or is deleted (its release was lost) is replaced
   * by compare-and-set, so a dead create cannot block a pair forever.
   */
  private async takePair(input: CreateConversationInput, a: string, b: string): Promise<ConversationRow | null> {
    let holder = await this.pairs.claim(input, a, b, input.conversation_id);
    for (let round = 0; holder !== input.conversation_id; round += 1) {
      if (round > 8) throw new Error(`DIRECT pair of ${input.conversation_id}: holder keeps changing`);
      let other: ConversationRow | null = null;
      for (const ms of PAIR_WAIT_MS) {
        other = await this.table.byId(holder);
        if (other) break;
        await sleep(ms);
      }
      if (other && other.deleted_at === null) return other;
      holder = (await this.pairs.takeOver(input, a, b, holder, input.conversation_id)) ?? (await this.pairs.claim(input, a, b, input.conversation_id));
    }
    return null;
  }

  /** Read for a write that changes the conversation row itself: null, or StaleEpochError. */
  private async fenceRead(ref: ConversationWrite): Promise<ConversationRow | null> {
    const conv = await this.table.live(ref);
    if (conv && ref.epoch < conv.epoch) throw new StaleEpochError(conv.conversation_id, ref.epoch, conv.epoch);
    return conv;
  }
}
