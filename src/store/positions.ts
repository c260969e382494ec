/**
 * Page positions: where a keyset page continues. The API layer signs them into opaque cursors,
 * but the store still checks their shape itself (a bug or a leaked signing key must not turn
 * into a query with garbage bounds): anything but the exact shape is `InvalidPositionError`.
 * Every driver validates through these functions, so they all refuse the same inputs.
 */
import { InvalidPositionError } from './errors.ts';

/** Continue the conversation listing after this one (order: last_activity_at DESC, id DESC). */
export interface ConversationPosition {
  last_activity_at: string;
  conversation_id: string;
}

/** Continue history after (older than) this seq. */
export interface MessagePosition {
  seq: number;
}

/** Continue the members page after this one (order: joined_at, member_id). */
export interface MemberPosition {
  joined_at: string;
  member_id: string;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Largest page a driver serves; the API caps at 100, this only stops runaway callers. */
export const MAX_PAGE_LIMIT = 1000;

function fields(value: unknown, keys: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidPositionError('not an object');
  }
  const record = value as Record<string, unknown>;
  const own = Object.keys(record);
  if (own.length !== keys.length || !keys.every((k) => Object.hasOwn(record, k))) {
    throw new InvalidPositionError(`expected exactly the fields ${keys.join(', ')}`);
  }
  return record;
}

function timestamp(value: unknown, name: string): string {
  if (typeof value !== 'string' || !ISO_MS.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidPositionError(`${name} is not an ISO-8601 UTC millisecond timestamp`);
  }
  return value;
}

function uuid(value: unknown, name: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new InvalidPositionError(`${name} is not a UUID`);
  return value;
}

export function conversationPosition(value: unknown): ConversationPosition {
  const r = fields(value, ['last_activity_at', 'conversation_id']);
  return { last_activity_at: timestamp(r.last_activity_at, 'last_activity_at'), conversation_id: uuid(r.conversation_id, 'conversation_id') };
}

export function messagePosition(value: unknown): MessagePosition {
  const r = fields(value, ['seq']);
  if (typeof r.seq !== 'number' || !Number.isSafeInteger(r.seq) || r.seq < 1) {
    throw new InvalidPositionError('seq is not a positive integer');
  }
  return { seq: r.seq };
}

export function memberPosition(value: unknown): MemberPosition {
  const r = fields(value, ['joined_at', 'member_id']);
  return { joined_at: timestamp(r.joined_at, 'joined_at'), member_id: uuid(r.member_id, 'member_id') };
}

/** A page limit: an integer from 1 to MAX_PAGE_LIMIT, else RangeError (a caller bug). */
export function pageLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new RangeError(`page limit must be an integer from 1 to ${MAX_PAGE_LIMIT} (got ${limit})`);
  }
  return limit;
}

/** `at` of a write: the caller's timestamp, checked, or now. */
export function timestampOrNow(at: string | undefined): string {
  if (at === undefined) return new Date().toISOString();
  if (!ISO_MS.test(at) || Number.isNaN(Date.parse(at))) {
    throw new RangeError(`timestamp must be ISO-8601 UTC with milliseconds (got ${JSON.stringify(at)})`);
  }
  return at;
}
