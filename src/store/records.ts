/**
 * What the store keeps and returns. Field names are the contract's snake_case wire names where
 * the two overlap, so the API layer maps records to responses without renaming; fields that are
 * store-only (epoch, last_seq, user keys) say so.
 *
 * Timestamps are ISO-8601 UTC strings with millisecond precision (`Date#toISOString()`).
 */

export type ConversationType = 'DIRECT' | 'GROUP' | 'CHANNEL';
export type ConversationStatus = 'ACTIVE' | 'ARCHIVED';
export type MemberRole = 'OWNER' | 'ADMIN' | 'MEMBER';
export type MemberStatus = 'ACTIVE' | 'LEFT' | 'REMOVED';
export type MessageType = 'TEXT' | 'SYSTEM' | 'FILE';
export type MessageStatus = 'ACTIVE' | 'EDITED' | 'DELETED';
export type PushPlatform = 'web' | 'fcm' | 'apns';

/** One tenant plus one application: the unit every conversation read and write is scoped by. */
export interface StoreContext {
  tenant_id: string;
  application_id: string;
}

/** Who reads: a user sees membership and unread state; a machine sees neither. */
export type Viewer = { kind: 'user'; user_id: string } | { kind: 'machine' };

export interface ConversationRecord {
  conversation_id: string;
  tenant_id: string;
  application_id: string;
  type: ConversationType;
  /** CHANNEL only (default PUBLIC); null for DIRECT and GROUP. */
  visibility: string | null;
  name: string | null;
  description: string | null;
  status: ConversationStatus;
  created_by_user_id: string | null;
  created_by_client_id: string | null;
  last_activity_at: string;
  created_at: string;
  updated_at: string;
  /** Soft delete; reads never return a deleted conversation. */
  deleted_at: string | null;
  /** ACTIVE members. */
  member_count: number;
  /** Store-only: highest message seq assigned (0 before the first message). */
  last_seq: number;
  /** Store-only: fencing token of the owning actor (see ConversationStore.claim). */
  epoch: number;
  /**
   * Store-only: changes (grows) whenever anything a history page of the conversation shows
   * changes: a message sent, edited, deleted or expired, a reaction added or removed. Readers
   * compare it to validate cached pages; its value has no other meaning.
   */
  revision: number;
}

export interface MemberRecord {
  member_id: string;
  conversation_id: string;
  user_id: string;
  role: MemberRole;
  status: MemberStatus;
  joined_at: string;
  updated_at: string;
}

/** A user as the service knows them; `display_name` is null when unknown (the API falls back). */
export interface ProfileSummary {
  user_id: string;
  display_name: string | null;
  avatar_url: string | null;
}

export interface ProfileRecord extends ProfileSummary {
  tenant_id: string;
  updated_at: string;
}

export interface MemberView extends MemberRecord, Omit<ProfileSummary, 'user_id'> {}

export interface ConversationView extends ConversationRecord {
  /** The viewer's role while an ACTIVE member; null for non-members and machines. */
  my_role: MemberRole | null;
  /** Users who are ACTIVE members: some message is unread. False for everyone else. */
  has_unread: boolean;
  /**
   * DIRECT and GROUP: the first ACTIVE members by (joined_at, member_id), at most the preview
   * bound the caller asked for. null for CHANNEL (the contract omits members there).
   */
  members: ProfileSummary[] | null;
}

export interface ConversationDetail extends ConversationView {
  /** The viewer's membership row in any status (LEFT/REMOVED included); null if none or machine. */
  my_membership: MemberRecord | null;
  /** Exact unread count for an ACTIVE member (0 otherwise). */
  unread_count: number;
  /** The viewer's read marker (0 when never read, or not a user). */
  last_read_seq: number;
}

export interface Attachment {
  file_id: string;
  name: string;
  mime_type: string;
  size: number;
  url: string | null;
}

export interface MessageRecord {
  message_id: string;
  conversation_id: string;
  tenant_id: string;
  application_id: string;
  /** Per-conversation order assigned by the owning actor; unique within the conversation. */
  seq: number;
  sender_user_id: string | null;
  sender_client_id: string | null;
  /** '' for a tombstone. */
  body: string;
  message_type: MessageType;
  reply_to_message_id: string | null;
  attachments: Attachment[];
  mentioned_user_ids: string[];
  status: MessageStatus;
  edited_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ReactionSummary {
  emoji: string;
  count: number;
  reacted_by_me: boolean;
}

export interface MessageView extends MessageRecord {
  /** Ordered by each emoji's first reaction time (then emoji), for the viewer given. */
  reactions: ReactionSummary[];
  /** The sender's profile; null when the message has no sender_user_id (SYSTEM). */
  sender: ProfileSummary | null;
}

export interface ReadState {
  last_read_seq: number;
  /** Messages with seq > last_read_seq, not DELETED, not sent by this user. */
  unread_count: number;
  has_unread: boolean;
}

export interface IdempotencyRecord {
  principal_key: string;
  idempotency_key: string;
  method_route: string;
  request_hash: string;
  /** null while the claiming request is still running. */
  response_status: number | null;
  /** Opaque to the store (the API stores its serialized response). */
  response_body: string | null;
  /** When the key was first claimed: kept across take-overs (ids of what the request creates derive from it). */
  created_at: string;
  /** The process holding a pending claim (ClaimOwner.owner); null on rows written before owners were. */
  owner: string | null;
}

export interface TenantSettings {
  tenant_id: string;
  /** null keeps messages forever. */
  message_retention_days: number | null;
  /** null until the settings were first written. */
  updated_at: string | null;
}

export interface RoleOverride {
  tenant_id: string;
  /** null for the tenant-wide mapping. */
  application_id: string | null;
  role_id: string;
  capabilities: string[];
  updated_at: string;
}

export interface PushDevice {
  tenant_id: string;
  user_id: string;
  platform: PushPlatform;
  /** Web: the subscription endpoint URL; fcm/apns: the native device token. */
  token_or_endpoint: string;
  p256dh: string | null;
  auth: string | null;
  created_at: string;
  updated_at: string;
}

export interface TenantOverviewCounts {
  conversations: { direct: number; group: number; channel: number; total: number };
  /** Distinct users with an ACTIVE membership in a conversation of the tenant that is not deleted. */
  members: number;
}

/** A page in list order; `next` is null on the last page, else the position to continue after. */
export interface Page<T, P> {
  items: T[];
  next: P | null;
}
