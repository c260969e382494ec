/**
 * The ActorHost: the node's conversation actors and the entry point route handlers call.
 *
 * One actor per conversation id, created on the first request and activated lazily inside its
 * mailbox (conversation-actor.ts). An actor idle for `idleMs` is passivated by the sweep, and at
 * `maxActors` the least recently used idle actors (by `lastActive`) are passivated at once.
 * Passivating forgets the actor and tells the store its epoch lets go (`conversations.release`:
 * the Cassandra store takes back the seqs it reserved and did not use); the store holds
 * everything, and the next request activates a new actor with a fresh claim (new epoch, last_seq
 * from the store).
 *
 * Only idle actors (nothing queued, running or in flight) are forgotten, so a passivated actor
 * can have no write still pending that the next activation's claim would fence. The sweep and
 * the lookup run on the event loop, never interleaved: a request either finds the actor before
 * it is forgotten or creates a new one after.
 *
 * The cluster issue puts a router in front: it sends a request to the node owning the
 * conversation on the ring, whose host runs it here; an ActorUnavailableError (fenced, draining)
 * tells the router to retry against the current owner.
 */
import type { Presence } from '../presence/index.ts';
import { uuidv7 } from './ids.ts';
import type { ChatStore, ConversationRecord, ConversationRef, MessageView } from '../store/index.ts';
import { ConversationActor, type ActorEnv } from './conversation-actor.ts';
import { ActorUnavailableError } from './errors.ts';
import type { ChatBus } from './events.ts';
import { markReadInMailbox, reactInMailbox, typingInMailbox } from './ops-interactions.ts';
import { createInMailbox, setArchivedInMailbox, softDeleteInMailbox, updateInMailbox } from './ops-conversation.ts';
import { addMemberInMailbox, removeMemberInMailbox } from './ops-members.ts';
import { deleteInMailbox, editInMailbox, sendInMailbox } from './ops-messages.ts';
import type {
  ActingPrincipal,
  ActorHostStats,
  ActorLog,
  AddMemberIntent,
  AddMemberResult,
  CreateConversationIntent,
  CreateConversationResult,
  DeleteMessageIntent,
  EditMessageIntent,
  MarkReadIntent,
  MarkReadResult,
  ReactionIntent,
  ReactionResult,
  RemoveMemberIntent,
  RemoveMemberResult,
  SendMessageIntent,
  SendMessageResult,
  TypingIntent,
  UpdateConversationIntent,
} from './types.ts';

export interface ActorHostOptions {
  store: ChatStore;
  bus: ChatBus;
  /** Passivate an actor idle this long; default 60 s. */
  idleMs?: number;
  /** Actors kept in memory before the least recently used idle ones go; default 10,000. */
  maxActors?: number;
  /** DIRECT/GROUP conversations up to this size keep every member id hot; default 1,000. */
  maxMembersHeld?: number;
  /**
   * Enqueue a push job per new message; default true. A node without a push worker can turn it
   * off, so jobs nobody consumes do not sit in the queue up to its bound.
   */
  enqueuePush?: boolean;
  /**
   * When given, a DIRECT or GROUP message whose push candidates are all online when it commits
   * makes no push job: they get the realtime event (ops-messages.ts, enqueuePush).
   */
  presence?: Presence;
  log?: ActorLog;
  /** Clock in epoch ms (event times, idleness); tests inject one. */
  now?: () => number;
  newId?: () => string;
}

const silent: ActorLog = { warn: () => {} };

/**
 * Every operation answers a promise (a refusal is a rejection, never a synchronous throw) and
 * rejects with ApiError of the contract's codes, ActorUnavailableError (retryable 503), or a
 * store error the edge renders as server_error.
 */
export class ActorHost {
  private readonly actors = new Map<string, ConversationActor>();
  private readonly env: ActorEnv;
  private readonly idleMs: number;
  private readonly maxActors: number;
  private readonly sweeper: NodeJS.Timeout;
  private draining = false;

  constructor(options: ActorHostOptions) {
    this.idleMs = options.idleMs ?? 60_000;
    this.maxActors = options.maxActors ?? 10_000;
    const maxMembersHeld = options.maxMembersHeld ?? 1000;
    for (const [name, value] of Object.entries({ idleMs: this.idleMs, maxActors: this.maxActors, maxMembersHeld })) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`actor host: ${name} must be a positive integer (got ${value})`);
    }
    this.env = {
      store: options.store,
      bus: options.bus,
      now: options.now ?? Date.now,
      newId: options.newId ?? (() => uuidv7()),
      maxMembersHeld,
      enqueuePush: options.enqueuePush ?? true,
      presence: options.presence ?? null,
      log: options.log ?? silent,
      stats: { actors: 0, activations: 0, passivations: 0, fenced: 0, pushJobsDropped: 0, pushJobsSkippedOnline: 0, publishFailures: 0 },
    };
    this.sweeper = setInterval(() => this.passivateIdle(), Math.max(1000, Math.floor(this.idleMs / 2)));
    this.sweeper.unref();
  }

  async createConversation(intent: CreateConversationIntent): Promise<CreateConversationResult> {
    const id = intent.conversation_id ?? this.env.newId();
    const actor = this.actor(id);
    return actor.create((adopt) => createInMailbox(actor, id, intent, adopt));
  }

  async sendMessage(ref: ConversationRef, intent: SendMessageIntent): Promise<SendMessageResult> {
    const actor = this.actor(ref.conversation_id);
    // A caller-chosen id is looked up (a retry answers the stored message) before the mailbox
    // where a read is a network round trip: inside it, one conversation's keyed sends would wait
    // for one read each in turn (Cassandra: 435 keyed sends/s on one conversation against 1,708
    // unkeyed, docs/benchmarks.md). A try that lands between this read and the append is still
    // found by the append, which answers it (created: false). SQLite reads locally, in the mailbox.
    const early = intent.message_id !== undefined && this.env.store.driver !== 'sqlite' ? this.env.store.messages.get(ref, intent.message_id, intent.sender_user_id) : undefined;
    early?.catch(() => {}); // awaited in the mailbox; a step that fails first must not leave it unhandled
    return actor.runPipelined(ref, (s) => sendInMailbox(actor, s, intent, early));
  }

  async editMessage(ref: ConversationRef, intent: EditMessageIntent): Promise<MessageView> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => editInMailbox(actor, s, intent));
  }

  async deleteMessage(ref: ConversationRef, intent: DeleteMessageIntent): Promise<void> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => deleteInMailbox(actor, s, intent));
  }

  async addReaction(ref: ConversationRef, intent: ReactionIntent): Promise<ReactionResult> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => reactInMailbox(actor, s, intent, true));
  }

  async removeReaction(ref: ConversationRef, intent: ReactionIntent): Promise<ReactionResult> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => reactInMailbox(actor, s, intent, false));
  }

  async addMember(ref: ConversationRef, intent: AddMemberIntent): Promise<AddMemberResult> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => addMemberInMailbox(actor, s, intent));
  }

  /** Leave (by is the member) or remove (anyone else, moderation included). */
  async removeMember(ref: ConversationRef, intent: RemoveMemberIntent): Promise<RemoveMemberResult> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => removeMemberInMailbox(actor, s, intent));
  }

  async leave(ref: ConversationRef, user_id: string): Promise<RemoveMemberResult> {
    return this.removeMember(ref, { user_id, by: { user_id, client_id: null } });
  }

  async updateConversation(ref: ConversationRef, intent: UpdateConversationIntent): Promise<ConversationRecord> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => updateInMailbox(actor, s, intent));
  }

  async archive(ref: ConversationRef, by: ActingPrincipal): Promise<ConversationRecord> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => setArchivedInMailbox(actor, s, true, by));
  }

  async unarchive(ref: ConversationRef, by: ActingPrincipal): Promise<ConversationRecord> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => setArchivedInMailbox(actor, s, false, by));
  }

  async softDelete(ref: ConversationRef, by: ActingPrincipal): Promise<void> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => softDeleteInMailbox(actor, s, by));
  }

  async markRead(ref: ConversationRef, intent: MarkReadIntent): Promise<MarkReadResult> {
    const actor = this.actor(ref.conversation_id);
    return actor.run(ref, (s) => markReadInMailbox(actor, s, intent));
  }

  async typing(ref: ConversationRef, intent: TypingIntent): Promise<void> {
    const actor = this.actor(ref.conversation_id);
    return actor.runPipelined(ref, (s) => typingInMailbox(actor, s, intent));
  }

  /** Passivates actors idle for idleMs (the sweep calls it; tests may too); answers how many. */
  passivateIdle(): number {
    const cutoff = this.env.now() - this.idleMs;
    let n = 0;
    for (const [id, actor] of this.actors) {
      if (actor.idle && actor.lastActive <= cutoff) {
        void this.forget(id, actor);
        n += 1;
      }
    }
    return n;
  }

  /**
   * Lets go of one conversation once what it accepted is done (the cluster calls it when the
   * ring moves the conversation to another node). False when no actor was held.
   */
  async passivate(conversation_id: string): Promise<boolean> {
    const actor = this.actors.get(conversation_id);
    if (!actor) return false;
    await actor.settled();
    if (!actor.idle) return false; // new work arrived meanwhile: the owner change will fence it
    await this.forget(conversation_id, actor);
    return true;
  }

  stats(): ActorHostStats {
    const { actors: _held, ...stats } = this.env.stats;
    return { actors: this.actors.size, ...stats };
  }

  /**
   * Graceful shutdown: refuses new requests (retryable), waits for what was accepted to be
   * durable and published, then forgets every actor. Idempotent.
   */
  async close(): Promise<void> {
    this.draining = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.actors.values()].map((actor) => actor.settled()));
    await Promise.all([...this.actors].map(([id, actor]) => this.forget(id, actor)));
  }

  /**
   * The actor of `id`, created if absent. A hit does not touch the map: recency is the actor's
   * own `lastActive`. (Keeping the map in use order took a delete and a set per call, and that
   * churn rebuilt the map's table every few hundred calls; the tables were promoted out of the
   * young generation and fed the major GCs of the send path's tail.)
   */
  private actor(id: string): ConversationActor {
    if (this.draining) throw new ActorUnavailableError('draining', id);
    let actor = this.actors.get(id);
    if (actor === undefined) {
      actor = new ConversationActor(id, this.env, (retired) => {
        if (this.actors.get(id) === retired) this.actors.delete(id);
      });
      this.evictOverflow();
      this.actors.set(id, actor);
    }
    return actor;
  }

  /**
   * At maxActors, passivates the least recently used idle actors (busy ones stay: they must
   * finish) down to maxActors - maxActors/16, so the sort is paid once per that many activations.
   */
  private evictOverflow(): void {
    if (this.actors.size < this.maxActors) return;
    const lowWater = this.maxActors - Math.max(1, Math.floor(this.maxActors / 16));
    const idle: ConversationActor[] = [];
    for (const actor of this.actors.values()) if (actor.idle) idle.push(actor);
    idle.sort((a, b) => a.lastActive - b.lastActive);
    for (const actor of idle) {
      if (this.actors.size <= lowWater) return;
      void this.forget(actor.conversation_id, actor);
    }
  }

  /** Forgets the actor; answers its release (never rejects; the sweep does not wait for it). */
  private forget(id: string, actor: ConversationActor): Promise<void> {
    if (this.actors.get(id) !== actor) return Promise.resolve();
    this.actors.delete(id);
    this.env.stats.passivations += 1;
    return actor.release();
  }
}
