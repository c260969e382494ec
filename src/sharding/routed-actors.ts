/**
 * RoutedActors: the ActorHost's operations, run wherever the conversation lives. Route handlers
 * call this instead of the host when the node is part of a cluster.
 *
 *   call ──► owner = ring.owner(conversation_id)
 *              ├─ this node ──► local ActorHost
 *              └─ another   ──► ForwardClient ──► owner's InternalServer ──► its ActorHost
 *        ◄── answer, or the owner's ApiError as is
 *        ◄── retryable failure: back off, re-read the ring, try again until the deadline, then 503
 *
 * Retried: ActorUnavailableError (fenced: another node claimed the conversation; draining: the
 * owner is shutting down), not_owner (the receiver's view differs; both sides re-read
 * membership), no owner known, and transport failures that provably did not deliver the call.
 * A call that may have run (timeout, connection cut after sending) is retried only when running
 * it twice is harmless (operations.ts). Backpressure (overloaded) is answered at once.
 *
 * Ids are fixed here before the first attempt: a create without conversation_id gets its UUID
 * now (the owner must be known before it exists), a send without message_id gets one, so a retry
 * lands on the same conversation and answers the stored message instead of writing a second one.
 */
import { ActorUnavailableError } from '../actors/errors.ts';
import { uuidv7 } from '../actors/ids.ts';
import type { ConversationRef } from '../store/index.ts';
import type { ForwardClient } from './forward-client.ts';
import { invokeLocal, safeToRepeat, type OpArgs, type OpResult, type Operation } from './operations.ts';
import type { Placement } from './placement.ts';
import { silentLog, type ConversationActors, type LocalActorHost, type ShardingLog } from './types.ts';
import { ForwardUnavailableError } from './wire.ts';

type Actors = ConversationActors;

/** Counters for metrics (the lead's prom-client registration reads them); mutated in place. */
export interface RoutingStats {
  /** Attempts run on this node's host. */
  local: number;
  /** Attempts forwarded to another node. */
  forwarded: number;
  /** Attempts that failed retryably and were tried again. */
  retries: number;
  /** Calls that ended with a retryable 503 (deadline passed, overloaded, or not safe to repeat). */
  unavailable: number;
}

export function newRoutingStats(): RoutingStats {
  return { local: 0, forwarded: 0, retries: 0, unavailable: 0 };
}

export interface RoutedActorsOptions {
  local: LocalActorHost;
  placement: Pick<Placement, 'owner' | 'touched' | 'suspectStale'>;
  client: Pick<ForwardClient, 'call'>;
  /** Overall time one call may take, retries included; default 5000 ms. */
  deadlineMs?: number;
  /** Per-attempt timeout of a forwarded call (capped by what is left of the deadline); default 3000 ms. */
  attemptTimeoutMs?: number;
  /** First retry delay; doubles up to 400 ms, with jitter. Default 25 ms. */
  backoffMs?: number;
  newId?: () => string;
  log?: ShardingLog;
  stats?: RoutingStats;
}

export class RoutedActors implements Actors {
  private readonly deadlineMs: number;
  private readonly attemptMs: number;
  private readonly backoffMs: number;
  private readonly newId: () => string;
  private readonly log: ShardingLog;
  private readonly stats: RoutingStats;

  constructor(private readonly options: RoutedActorsOptions) {
    this.stats = options.stats ?? newRoutingStats();
    this.deadlineMs = options.deadlineMs ?? 5000;
    this.attemptMs = options.attemptTimeoutMs ?? 3000;
    this.backoffMs = options.backoffMs ?? 25;
    // The ids a single node mints (UUIDv7, actors/ids.ts): one kind of id whichever node runs.
    this.newId = options.newId ?? (() => uuidv7());
    this.log = options.log ?? silentLog;
  }

  createConversation(...[intent]: Parameters<Actors['createConversation']>): ReturnType<Actors['createConversation']> {
    const fixed = intent.conversation_id ? intent : Object.assign({}, intent, { conversation_id: this.newId() });
    return this.route('createConversation', fixed.conversation_id as string, [fixed]);
  }

  sendMessage(...[ref, intent]: Parameters<Actors['sendMessage']>): ReturnType<Actors['sendMessage']> {
    const fixed = intent.message_id ? intent : Object.assign({}, intent, { message_id: this.newId() });
    return this.route('sendMessage', ref.conversation_id, [ref, fixed]);
  }

  editMessage(...args: Parameters<Actors['editMessage']>): ReturnType<Actors['editMessage']> {
    return this.byRef('editMessage', args);
  }

  deleteMessage(...args: Parameters<Actors['deleteMessage']>): ReturnType<Actors['deleteMessage']> {
    return this.byRef('deleteMessage', args);
  }

  addReaction(...args: Parameters<Actors['addReaction']>): ReturnType<Actors['addReaction']> {
    return this.byRef('addReaction', args);
  }

  removeReaction(...args: Parameters<Actors['removeReaction']>): ReturnType<Actors['removeReaction']> {
    return this.byRef('removeReaction', args);
  }

  addMember(...args: Parameters<Actors['addMember']>): ReturnType<Actors['addMember']> {
    return this.byRef('addMember', args);
  }

  removeMember(...args: Parameters<Actors['removeMember']>): ReturnType<Actors['removeMember']> {
    return this.byRef('removeMember', args);
  }

  leave(...args: Parameters<Actors['leave']>): ReturnType<Actors['leave']> {
    return this.byRef('leave', args);
  }

  updateConversation(...args: Parameters<Actors['updateConversation']>): ReturnType<Actors['updateConversation']> {
    return this.byRef('updateConversation', args);
  }

  archive(...args: Parameters<Actors['archive']>): ReturnType<Actors['archive']> {
    return this.byRef('archive', args);
  }

  unarchive(...args: Parameters<Actors['unarchive']>): ReturnType<Actors['unarchive']> {
    return this.byRef('unarchive', args);
  }

  softDelete(...args: Parameters<Actors['softDelete']>): ReturnType<Actors['softDelete']> {
    return this.byRef('softDelete', args);
  }

  markRead(...args: Parameters<Actors['markRead']>): ReturnType<Actors['markRead']> {
    return this.byRef('markRead', args);
  }

  typing(...args: Parameters<Actors['typing']>): ReturnType<Actors['typing']> {
    return this.byRef('typing', args);
  }

  private byRef<O extends Exclude<Operation, 'createConversation'>>(op: O, args: OpArgs<O>): Promise<OpResult<O>> {
    return this.route(op, (args[0] as ConversationRef).conversation_id, args);
  }

  private async route<O extends Operation>(op: O, conversation_id: string, args: OpArgs<O>): Promise<OpResult<O>> {
    const deadline = Date.now() + this.deadlineMs;
    let delay = this.backoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(op, conversation_id, args, deadline);
      } catch (err) {
        if (!this.retryable(op, err)) {
          if (err instanceof ForwardUnavailableError) this.stats.unavailable++;
          throw err;
        }
        const wait = delay * (0.5 + Math.random() / 2);
        if (Date.now() + wait >= deadline) {
          this.stats.unavailable++;
          this.log.warn({ op, conversation_id, attempts: attempt, err: (err as Error).message }, 'sharding: giving up on a call after retries');
          throw err;
        }
        // The owner refused or vanished: the view here may be the stale one.
        this.stats.retries++;
        void this.options.placement.suspectStale().catch(() => {});
        await new Promise((r) => setTimeout(r, wait));
        delay = Math.min(delay * 2, 400);
      }
    }
  }

  private attempt<O extends Operation>(op: O, conversation_id: string, args: OpArgs<O>, deadline: number): Promise<OpResult<O>> {
    const owner = this.options.placement.owner(conversation_id);
    switch (owner.kind) {
      case 'self':
        this.stats.local++;
        this.options.placement.touched(conversation_id);
        return invokeLocal(this.options.local, op, args);
      case 'remote':
        this.stats.forwarded++;
        return this.options.client.call(owner.node, op, args, conversation_id, Math.max(1, Math.min(this.attemptMs, deadline - Date.now())));
      case 'none':
        return Promise.reject(new ForwardUnavailableError('no_owner', conversation_id, 'no live node is known'));
      default: {
        const unknown: never = owner;
        throw new Error(`unknown owner kind ${String(unknown)}`);
      }
    }
  }

  private retryable(op: Operation, err: unknown): boolean {
    if (err instanceof ActorUnavailableError) return true;
    if (err instanceof ForwardUnavailableError) {
      if (err.undelivered) return true;
      return err.reason !== 'overloaded' && safeToRepeat(op);
    }
    return false;
  }
}
