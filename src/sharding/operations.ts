/**
 * The operations a node may forward, as data: their names (the internal URL path segment), how
 * to find the conversation an invocation targets, and which ones may be sent again after an
 * ambiguous failure (the request left, no answer came back).
 */
import type { ConversationActors, LocalActorHost } from './types.ts';

export const OPERATIONS = [
  'createConversation',
  'sendMessage',
  'editMessage',
  'deleteMessage',
  'addReaction',
  'removeReaction',
  'addMember',
  'removeMember',
  'leave',
  'updateConversation',
  'archive',
  'unarchive',
  'softDelete',
  'markRead',
  'typing',
] as const satisfies ReadonlyArray<keyof ConversationActors>;

export type Operation = (typeof OPERATIONS)[number];
export type OpArgs<O extends Operation> = Parameters<ConversationActors[O]>;
export type OpResult<O extends Operation> = Awaited<ReturnType<ConversationActors[O]>>;

const NAMES: ReadonlySet<string> = new Set(OPERATIONS);

export function isOperation(name: string): name is Operation {
  return NAMES.has(name);
}

/**
 * Operations whose second run has the effect of one: sends and creates carry ids the router
 * fixed before the first attempt (a retry answers the stored record), the rest set a state
 * (archived, a reaction present, a read marker that never moves back). softDelete is the
 * exception: its retry would answer not_found for a delete that succeeded, so after an ambiguous
 * failure it answers the 503 and lets the client (with its Idempotency-Key) decide.
 */
const SAFE_TO_REPEAT: ReadonlySet<Operation> = new Set(OPERATIONS.filter((op) => op !== 'softDelete'));

export function safeToRepeat(op: Operation): boolean {
  return SAFE_TO_REPEAT.has(op);
}

/**
 * The conversation an invocation targets: the ref's id, or for createConversation the intent's
 * id (the router always sets it before routing). Null when the arguments lack one, which the
 * internal server refuses as a malformed request.
 */
export function conversationOf(op: Operation, args: readonly unknown[]): string | null {
  const first = args[0];
  if (typeof first !== 'object' || first === null) return null;
  const id = (first as { conversation_id?: unknown }).conversation_id;
  if (typeof id !== 'string' || id === '') return null;
  if (op !== 'createConversation') {
    const ref = first as { tenant_id?: unknown; application_id?: unknown };
    if (typeof ref.tenant_id !== 'string' || typeof ref.application_id !== 'string') return null;
  }
  return id;
}

/** Expected argument count per operation (two-argument calls all take a ref first). */
export function arity(op: Operation): number {
  return op === 'createConversation' ? 1 : 2;
}

/** Runs `op` on the local host with arguments checked only for shape (conversationOf, arity). */
export function invokeLocal<O extends Operation>(host: LocalActorHost, op: O, args: OpArgs<O>): Promise<OpResult<O>> {
  const method = host[op] as unknown as (...a: OpArgs<O>) => Promise<OpResult<O>>;
  return method.apply(host, args);
}
