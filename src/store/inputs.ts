/**
 * What every store driver checks and builds the same way: argument rules (caller bugs are
 * RangeError, with one wording across drivers) and the records a create or an append stores.
 */
import { timestampOrNow } from './positions.ts';
import type { ConversationDetail, ConversationRecord, MemberRecord, MessageRecord, ProfileSummary, PushDevice, ReadState } from './records.ts';
import type { ConversationGist, CreateConversationInput } from './types-conversations.ts';
import type { AppendMessageInput, RetentionInput } from './types-messages.ts';
import type { PushDeviceInput } from './types-tenant.ts';

export const CONVERSATION_TYPES: ReadonlySet<string> = new Set(['DIRECT', 'GROUP', 'CHANNEL']);
export const MESSAGE_TYPES: ReadonlySet<string> = new Set(['TEXT', 'SYSTEM', 'FILE']);

export function checkEpoch(epoch: number): number {
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new RangeError(`epoch must be a non-negative integer (got ${epoch})`);
  return epoch;
}

export function checkPreview(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > 1000) throw new RangeError(`members preview must be an integer from 0 to 1000 (got ${n})`);
}

export function checkConversationType(type: string | undefined): void {
  if (type !== undefined && !CONVERSATION_TYPES.has(type)) throw new RangeError(`unknown conversation type ${String(type)}`);
}

/** A create's rules; answers the member user ids, the first epoch and the write's time. */
export function checkCreate(input: CreateConversationInput): { users: string[]; epoch: number; at: string } {
  checkConversationType(input.type);
  const users = input.members.map((m) => m.user_id);
  if (new Set(users).size !== users.length) throw new RangeError('members must have distinct user ids');
  if (input.type === 'DIRECT' && users.length !== 2) throw new RangeError('a DIRECT conversation has exactly two distinct members');
  return { users, epoch: checkEpoch(input.epoch ?? 1), at: timestampOrNow(input.at) };
}

/** An append's rules; answers the write's time. */
export function checkAppend(input: AppendMessageInput): string {
  checkEpoch(input.epoch);
  if (!Number.isSafeInteger(input.seq) || input.seq < 1) throw new RangeError(`seq must be a positive integer (got ${input.seq})`);
  if (!MESSAGE_TYPES.has(input.message_type)) throw new RangeError(`unknown message_type ${String(input.message_type)}`);
  return timestampOrNow(input.at);
}

/** A read marker's rules; answers the write's time. */
export function checkMarkRead(input: { epoch: number; seq: number; at?: string }): string {
  checkEpoch(input.epoch);
  if (!Number.isSafeInteger(input.seq) || input.seq < 0) throw new RangeError(`seq must be a non-negative integer (got ${input.seq})`);
  return timestampOrNow(input.at);
}

/** The record a create stores. */
export function newConversationRecord(input: CreateConversationInput, epoch: number, at: string): ConversationRecord {
  return {
    conversation_id: input.conversation_id,
    tenant_id: input.tenant_id,
    application_id: input.application_id,
    type: input.type,
    visibility: input.type === 'CHANNEL' ? (input.visibility ?? 'PUBLIC') : null,
    name: input.name,
    description: input.description,
    status: 'ACTIVE',
    created_by_user_id: input.created_by_user_id,
    created_by_client_id: input.created_by_client_id,
    last_activity_at: at,
    created_at: at,
    updated_at: at,
    deleted_at: null,
    member_count: input.members.length,
    last_seq: 0,
    epoch,
    revision: 0,
  };
}

/** The record an append stores. */
export function newMessageRecord(input: AppendMessageInput, at: string): MessageRecord {
  return {
    message_id: input.message_id,
    conversation_id: input.conversation_id,
    tenant_id: input.tenant_id,
    application_id: input.application_id,
    seq: input.seq,
    sender_user_id: input.sender_user_id,
    sender_client_id: input.sender_client_id,
    body: input.body,
    message_type: input.message_type,
    reply_to_message_id: input.reply_to_message_id ?? null,
    attachments: input.attachments ?? [],
    mentioned_user_ids: input.mentioned_user_ids ?? [],
    status: 'ACTIVE',
    edited_at: null,
    deleted_at: null,
    created_at: at,
    updated_at: at,
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A retention pass's rules; answers the batch size and the cutoff (messages older are expired). */
export function checkRetention(input: RetentionInput): { batch: number; cutoff: string } {
  if (!Number.isInteger(input.days) || input.days < 1) throw new RangeError(`retention days must be an integer >= 1 (got ${input.days})`);
  const batch = input.batch_size ?? 500;
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError('batch_size must be a positive integer');
  return { batch, cutoff: new Date(Date.parse(timestampOrNow(input.at)) - input.days * DAY_MS).toISOString() };
}

/** The gate's view of a conversation (types-conversations.ts, ConversationGist). */
export function gistOf(c: ConversationRecord): ConversationGist {
  return { conversation_id: c.conversation_id, type: c.type, visibility: c.visibility, status: c.status, revision: c.revision };
}

const PUSH_PLATFORMS: ReadonlySet<string> = new Set(['web', 'fcm', 'apns']);

/**
 * A device registration's rules; answers the stored fields it sets (the driver adds created_at,
 * kept on re-registration, and updated_at).
 */
export function checkPushDevice(device: PushDeviceInput): Omit<PushDevice, 'created_at' | 'updated_at'> {
  if (!PUSH_PLATFORMS.has(device.platform)) throw new RangeError(`unknown push platform ${String(device.platform)}`);
  if (!device.token_or_endpoint) throw new RangeError('token_or_endpoint must not be empty');
  return {
    tenant_id: device.tenant_id,
    user_id: device.user_id,
    platform: device.platform,
    token_or_endpoint: device.token_or_endpoint,
    p256dh: device.p256dh ?? null,
    auth: device.auth ?? null,
  };
}

const MAX_SEARCH = 1000;

/** Lower-casing of stored search keys and of queries (full Unicode), so they always agree. */
export function searchKey(text: string): string {
  return text.toLowerCase();
}

/**
 * The smallest string greater than every string that starts with `prefix` (non-empty), in code
 * point order, which is SQLite's BINARY (UTF-8 byte) order and Cassandra's text order: the last
 * code point plus one, skipping the surrogate range. (A prefix ending in U+10FFFF, a
 * non-character, gets a bound just past itself.)
 */
export function prefixSuccessor(prefix: string): string {
  const points = Array.from(prefix);
  const last = points.pop()!.codePointAt(0)!;
  if (last === 0x10ffff) return `${prefix}\u{10FFFF}`;
  const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
  return points.join('') + String.fromCodePoint(next);
}

/** A profile search's rules; answers the lower bound of its key range (searchKey of the prefix). */
export function checkSearch(prefix: string, limit: number): string {
  if (typeof prefix !== 'string' || prefix.length === 0) throw new RangeError('search prefix must not be empty');
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH) throw new RangeError(`search limit must be an integer from 1 to ${MAX_SEARCH}`);
  return searchKey(prefix);
}

/**
 * A conversation as one viewer sees it, from what a driver read: the viewer's membership (null
 * for machines and non-members) and, for an ACTIVE member, the read state.
 */
export function conversationDetail(conv: ConversationRecord, membership: MemberRecord | null, state: ReadState | null, members: ProfileSummary[] | null): ConversationDetail {
  return {
    my_role: membership?.status === 'ACTIVE' ? membership.role : null,
    has_unread: state?.has_unread ?? false,
    members,
    my_membership: membership,
    unread_count: state?.unread_count ?? 0,
    last_read_seq: state?.last_read_seq ?? 0,
    ...conv,
  };
}
