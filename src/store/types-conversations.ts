/**
 * The conversation and membership parts of the store port (contract shared by all methods: see
 * types.ts). Inputs that write carry `epoch` (fencing) and an optional `at` (the write's time;
 * default now) so an actor can stamp a write with the time it also puts in its event.
 */
import type {
  ConversationDetail,
  ConversationRecord,
  ConversationStatus,
  ConversationType,
  ConversationView,
  MemberRecord,
  MemberRole,
  MemberStatus,
  MemberView,
  Page,
  StoreContext,
  TenantOverviewCounts,
  Viewer,
} from './records.ts';
import type { ConversationPosition, MemberPosition } from './positions.ts';

export interface ConversationRef extends StoreContext {
  conversation_id: string;
}

export interface ConversationWrite extends ConversationRef {
  epoch: number;
  at?: string;
}

export interface NewMember {
  member_id: string;
  user_id: string;
  role: MemberRole;
}

export interface CreateConversationInput extends ConversationRef {
  type: ConversationType;
  /** CHANNEL only; default PUBLIC. Ignored (stored null) for DIRECT and GROUP. */
  visibility?: string | null;
  name: string | null;
  description: string | null;
  created_by_user_id: string | null;
  created_by_client_id: string | null;
  /** Every initial member, creator included; user ids distinct. DIRECT: exactly two. */
  members: NewMember[];
  /** Initial fencing epoch for the creating actor; default 1. */
  epoch?: number;
  at?: string;
}

export interface ConversationPatch {
  name?: string | null;
  description?: string | null;
  visibility?: string | null;
  status?: ConversationStatus;
}

export interface ListConversationsQuery extends StoreContext {
  /** Users: ACTIVE memberships plus PUBLIC channels. Machines: every conversation. */
  viewer: Viewer;
  type?: ConversationType;
  limit: number;
  after?: ConversationPosition | null;
  /** Bound of `members` on DIRECT/GROUP items; 0 gives empty arrays. */
  members_preview: number;
}

/** The fields of a conversation an access check and a cached page need. */
export type ConversationGist = Pick<ConversationRecord, 'conversation_id' | 'type' | 'visibility' | 'status' | 'revision'>;

/**
 * What a read inside a conversation needs: the conversation's gist (with `revision`) and the
 * viewer's membership. Not the whole record: materializing a row of twenty columns per read cost
 * more than the read itself (measured: 13.4 µs for the whole row, 6.5 µs for these).
 */
export interface ConversationGate {
  conversation: ConversationGist;
  /** The user's membership status in any state; null when none (and always for a null user). */
  member_status: MemberStatus | null;
}

export interface ConversationStore {
  /**
   * The live conversation of this context (null: absent, deleted, or another context) and the
   * membership status of `user_id`, in one snapshot: the access check of history and member
   * reads, and the validity check of cached pages (`revision`). The hot read path: drivers
   * answer it with one primary-key read where they can.
   */
  gate(ref: ConversationRef, user_id: string | null): Promise<ConversationGate | null>;

  /**
   * The same answer without a promise, offered by drivers whose reads complete synchronously
   * (SQLite): a history page served from the page cache is then answered inside the request's
   * callback, with no promise hop. Absent on drivers that read over the network.
   */
  gateSync?(ref: ConversationRef, user_id: string | null): ConversationGate | null;

  /**
   * Creates the conversation, its members (ACTIVE, joined at `at`, member_count set) and, for
   * DIRECT, the pair entry, atomically. Answers `created: false` with the stored record when
   * `conversation_id` already exists in this context (a retry), or when a DIRECT conversation of
   * the same two users exists in the context (whatever its id): concurrent creates of one pair
   * yield exactly one conversation. IdConflictError when the id exists in another context or
   * with another type. RangeError for a DIRECT without exactly two distinct users, or duplicate
   * user ids.
   */
  create(input: CreateConversationInput): Promise<{ conversation: ConversationRecord; created: boolean }>;

  /**
   * Takes ownership for an actor that activates: atomically raises the epoch by one and answers
   * the record with the new epoch (and `last_seq`, where the actor continues numbering). Every
   * holder of an older epoch is fenced out from then on. null when absent or deleted.
   */
  claim(ref: ConversationRef): Promise<ConversationRecord | null>;

  /**
   * The actor holding `epoch` lets go (passivation, shutdown), with none of its writes in flight.
   * A driver that hands seqs out in ranges returns the ones this holder never used, so the next
   * owner continues without a gap; otherwise a no-op. Never fails a caller for a lost race: the
   * next claim fences whatever is left.
   */
  release(input: ConversationWrite): Promise<void>;

  /** Applies the fields present in `patch`; sets updated_at. null when absent or deleted. */
  update(input: ConversationWrite & { patch: ConversationPatch }): Promise<ConversationRecord | null>;

  /**
   * Soft delete: sets deleted_at; reads no longer return it; a DIRECT pair is freed so the two
   * users can start a new one. Messages and members stay. Answers the deleted record, or null
   * when absent or already deleted.
   */
  softDelete(input: ConversationWrite): Promise<ConversationRecord | null>;

  /**
   * One conversation as `viewer` sees it, or null when absent or deleted. Visibility rules are
   * the caller's: a user who is not a member still gets the record (with my_role null).
   */
  get(ref: ConversationRef, viewer: Viewer, membersPreview: number): Promise<ConversationDetail | null>;

  /**
   * A page ordered by last_activity_at DESC, conversation_id DESC (deleted ones excluded).
   * InvalidPositionError for a malformed `after`; RangeError for a limit outside 1..1000.
   */
  list(query: ListConversationsQuery): Promise<Page<ConversationView, ConversationPosition>>;

  /** Counts for the admin overview: non-deleted conversations by type, distinct active members. */
  overview(tenant_id: string): Promise<TenantOverviewCounts>;
}

export interface AddMemberInput extends ConversationWrite, NewMember {}

export interface MemberStatusInput extends ConversationWrite {
  user_id: string;
  status: 'LEFT' | 'REMOVED';
}

export interface ListMembersQuery extends ConversationRef {
  limit: number;
  after?: MemberPosition | null;
  /** Default false: ACTIVE members only. True: every status. */
  include_inactive?: boolean;
}

export interface MemberStore {
  /**
   * Adds `user_id` as ACTIVE. A user whose row is LEFT or REMOVED is reactivated in the same row
   * (same member_id; role and joined_at taken from this call); an ACTIVE member is left as is
   * (`changed: false`; `member_id` of the input is then ignored). A joining user's read marker
   * moves to the conversation's last_seq, so history from before joining is not unread.
   * member_count follows. null when the conversation is absent or deleted.
   */
  add(input: AddMemberInput): Promise<{ member: MemberRecord; changed: boolean } | null>;

  /**
   * Moves an ACTIVE member to LEFT or REMOVED (member_count follows). A member already not
   * ACTIVE is answered unchanged (`changed: false`). null when the conversation is absent or
   * deleted, or the user never was a member.
   */
  setStatus(input: MemberStatusInput): Promise<{ member: MemberRecord; changed: boolean } | null>;

  /** Changes an ACTIVE member's role. null when absent, deleted, or not an ACTIVE member. */
  setRole(input: ConversationWrite & { user_id: string; role: MemberRole }): Promise<MemberRecord | null>;

  /** The user's membership row in any status; null when none (or conversation absent/deleted). */
  get(ref: ConversationRef, user_id: string): Promise<MemberRecord | null>;

  /** Members with profiles, ordered by joined_at, member_id. null when the conversation is absent. */
  list(query: ListMembersQuery): Promise<Page<MemberView, MemberPosition> | null>;

  /** Of `user_ids`, those that are ACTIVE members (push candidates; mention checks). */
  filterActive(ref: ConversationRef, user_ids: readonly string[]): Promise<string[]>;

  /**
   * Ids of the non-deleted conversations of the context where the user is an ACTIVE member,
   * optionally of one type (the realtime credential lists the user's CHANNELs).
   */
  conversationIdsOf(ctx: StoreContext, user_id: string, type?: ConversationType): Promise<string[]>;
}
