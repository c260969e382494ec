/**
 * The conversation actor: the one place where a conversation's mutations are ordered.
 *
 *   host.sendMessage(ref, ..) ─┐
 *   host.addMember(ref, ..)  ──┼──> mailbox (FIFO) ──> one step at a time ──> store write ──┐
 *   host.markRead(ref, ..)   ──┘    ^                  (state check, seq)                   │
 *                                   │                                                       v
 *                            the next step starts     tail: continuations in issue order ─> bus.publish
 *                            once this one has issued       (write durable? then publish, then answer)
 *                            its write (sends) or once
 *                            the write is durable (the rest)
 *
 * Guarantees:
 *  - Steps of one conversation run one at a time, in arrival order; different conversations'
 *    actors run concurrently, so their writes meet in the store's group commit.
 *  - seq = last_seq + 1, assigned inside the mailbox: unique and gap-free while writes succeed
 *    (the store's unique seq is the backstop: never a duplicate, whatever happens).
 *  - Events are published after their write is durable, in the order the writes were issued,
 *    hence in seq order; a caller is answered after its event was handed to the bus.
 *  - Sends pipeline: a send step validates, assigns the seq and issues its append without
 *    awaiting the previous append's commit, so a burst to one conversation shares one group
 *    commit instead of paying one fsync per message. The store applies one caller's unawaited
 *    writes in call order. Every other step is a barrier: it waits for in-flight writes first,
 *    because it reads the store (a message being edited, a reply target) and must see them.
 *  - Fencing: every write carries the epoch obtained at activation (store.conversations.claim).
 *    A StaleEpochError means another actor claimed the conversation: this one retires for good
 *    (the host forgets it; it never writes again) and the caller gets ActorUnavailableError
 *    (503, retryable). Any other write failure drops the hot state, so the next step reloads it
 *    from the store after the in-flight writes settled. If that failure hit a send while later
 *    sends were already issued, those may commit: the seq of the failed one stays unused (a
 *    gap, never a duplicate). Only a store that can fail one commit and accept the next one
 *    (disk full, I/O error) gets there.
 *
 * Methods whose names end in `InMailbox` may only be called from a step (they read or change
 * the hot state without further synchronization).
 */
import type { Presence } from '../presence/index.ts';
import { ApiError, storeUnavailable } from '../errors/catalog.ts';
import { StaleEpochError, StoreUnavailableError, type ChatStore, type ConversationRecord, type ConversationRef, type ConversationWrite } from '../store/index.ts';
import { ActorUnavailableError, conversationNotFound } from './errors.ts';
import type { ChatBus, ChatEventBody } from './events.ts';
import { channelsFor } from './fanout.ts';
import { Mailbox } from './mailbox.ts';
import { MemberSet } from './members.ts';
import type { ActorHostStats, ActorLog, SendMessageResult } from './types.ts';
import { MEMBERS_PREVIEW } from '../api/wire.ts';
import { eventConversation, type EventConversation } from './wire.ts';

/** What every actor of a host shares. */
export interface ActorEnv {
  store: ChatStore;
  bus: ChatBus;
  now: () => number;
  newId: () => string;
  maxMembersHeld: number;
  enqueuePush: boolean;
  /** Drops online push candidates before a job is made (ActorHostOptions.presence); null: the worker alone does. */
  presence: Presence | null;
  log: ActorLog;
  stats: ActorHostStats;
}

/** The hot state; replaced at activation, dropped when it may be stale. */
export interface ActorState {
  /** epoch: this actor's fencing token; last_seq: the last seq it assigned. */
  conversation: ConversationRecord;
  members: MemberSet;
}

/** What a pipelined step answers: the mailbox moves on while `done` waits for the commit. */
export interface Later<T> {
  done: Promise<T>;
}

const noop = (): void => {};

export class ConversationActor {
  private readonly mailbox = new Mailbox();
  private state: ActorState | null = null;
  private retired: ActorUnavailableError | null = null;
  /** Settles after every continuation issued so far; never rejects. */
  private tail: Promise<void> = Promise.resolve();
  private inflight = 0;
  /** Sends with a caller-chosen message_id issued and not yet settled: duplicates join, replies may target them. */
  readonly pendingSends = new Map<string, Promise<SendMessageResult>>();
  /**
   * Caller-chosen message ids whose write failed here (a store error, possibly ambiguous: the row
   * may have landed). Nothing was published for them; a retry that finds the row publishes it.
   * Bounded: the oldest are forgotten first.
   */
  readonly failedSends = new Set<string>();
  /** env.now() when the actor last had work; the host passivates on it. */
  lastActive: number;

  constructor(
    readonly conversation_id: string,
    readonly env: ActorEnv,
    private readonly onRetire: (actor: ConversationActor) => void,
  ) {
    this.lastActive = env.now();
  }

  /** Nothing running, queued or in flight: safe to forget. */
  get idle(): boolean {
    return this.mailbox.idle && this.inflight === 0;
  }

  /** Runs `step` as a barrier: after every in-flight write settled. */
  run<T>(ref: ConversationRef, step: (s: ActorState) => Promise<T>): Promise<T> {
    return this.enter(ref, true, step);
  }

  /** Runs a pipelined `step`; answers once the write it issued is durable and published. */
  async runPipelined<T>(ref: ConversationRef, step: (s: ActorState) => Promise<Later<T>>): Promise<T> {
    const later = await this.enter(ref, false, step);
    return later.done;
  }

  /** Runs the creation of this actor's conversation; `adopt` may install the state it created. */
  create<T>(step: (adopt: (state: ActorState) => void) => Promise<T>): Promise<T> {
    return this.mailbox.post(async () => {
      this.touch();
      if (this.retired) throw this.retired;
      await this.tail;
      try {
        return await step((state) => (this.state = state));
      } catch (error) {
        throw this.failed(error);
      }
    });
  }

  /**
   * The host forgets this actor (idle: nothing queued or in flight): the store may take back what
   * the epoch held (Cassandra's unused seqs), so the next owner numbers on without a gap. Never
   * rejects: a failure only leaves a gap, and the next claim fences us anyway.
   */
  release(): Promise<void> {
    const s = this.state;
    if (s === null || this.retired) return Promise.resolve();
    this.state = null;
    const c = s.conversation;
    const write = { tenant_id: c.tenant_id, application_id: c.application_id, conversation_id: c.conversation_id, epoch: c.epoch };
    return this.env.store.conversations.release(write).catch((error: unknown) => {
      this.env.log.warn({ err: String(error), conversation_id: c.conversation_id }, 'releasing the conversation failed');
    });
  }

  /** Resolves once everything posted so far has finished (shutdown). */
  settled(): Promise<void> {
    return this.mailbox.post(() => this.tail);
  }

  private enter<T>(ref: ConversationRef, barrier: boolean, step: (s: ActorState) => Promise<T>): Promise<T> {
    return this.mailbox.post(async () => {
      this.touch();
      if (this.retired) throw this.retired;
      // Activation claims a new epoch, which would fence our own in-flight writes: drain first.
      if (barrier || this.state === null) await this.tail;
      if (this.retired) throw this.retired; // a write that failed during the drain retired us
      try {
        if (this.state === null) this.state = await this.activateInMailbox(ref);
        const c = this.state.conversation;
        if (c.tenant_id !== ref.tenant_id || c.application_id !== ref.application_id) throw conversationNotFound();
        return await step(this.state);
      } catch (error) {
        throw this.failed(error);
      }
    });
  }

  private async activateInMailbox(ref: ConversationRef): Promise<ActorState> {
    const conversation = await this.env.store.conversations.claim(ref);
    if (!conversation) throw conversationNotFound();
    this.env.stats.activations += 1;
    return { conversation, members: await MemberSet.load(this.env.store, conversation, this.env.maxMembersHeld) };
  }

  /**
   * Issues a write whose continuation `then` runs after every earlier continuation, once the
   * write is durable; answers what `then` answers. `then` may publish and touch fields nothing
   * validates against (last_activity_at); it runs outside the mailbox.
   */
  commitInMailbox<R, T>(write: Promise<R>, then: (result: R) => Promise<T>): Promise<T> {
    this.inflight += 1;
    // Settled at once, so a write that fails before its turn is never an unhandled rejection.
    const outcome = write.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const done = this.tail.then(async () => {
      try {
        const o = await outcome;
        if (!o.ok) throw this.failed(o.error);
        return await then(o.value);
      } finally {
        this.inflight -= 1;
        this.touch();
      }
    });
    this.tail = done.then(noop, noop);
    done.catch(noop); // the caller handles it; this only keeps the runtime from flagging it early
    return done;
  }

  /** The write fields every store write of this conversation carries. */
  writeInMailbox(s: ActorState, at: string): ConversationWrite {
    const c = s.conversation;
    return { tenant_id: c.tenant_id, application_id: c.application_id, conversation_id: c.conversation_id, epoch: c.epoch, at };
  }

  /** The store answered null for a conversation we hold: it is gone (deleted, or moved and deleted). */
  goneInMailbox(): Error {
    this.state = null;
    return conversationNotFound();
  }

  /** Forgets the hot state after a committed soft delete. */
  forgetInMailbox(): void {
    this.state = null;
  }

  timestamp(): string {
    return new Date(this.env.now()).toISOString();
  }

  /**
   * Publishes `event` to its channels (fanout.ts) in one bus call, without awaiting the bus: the
   * bus appends one caller's publishes in call order, and every call here happens in event
   * order. One call for all the channels of a GROUP message: the bus serializes the event once
   * (and on Redis makes one round trip). The conversation is the key: a bus that shards its
   * events (the Redis fan log) keeps one conversation's events in order. A refused publish is
   * logged and counted; the mutation stands.
   */
  async publishInMailbox(s: ActorState, event: ChatEventBody, alsoUsers: readonly string[] = []): Promise<void> {
    const c = s.conversation;
    const members = c.type === 'CHANNEL' ? [] : await s.members.activeIds(this.env.store, c);
    const channels = channelsFor(event, c.type, members, alsoUsers);
    if (channels.length === 0) return;
    this.env.bus.publishMany(channels, event, c.conversation_id).catch((error: unknown) => {
      this.env.stats.publishFailures += 1;
      this.env.log.warn({ err: String(error), channels: channels.length, type: event.type }, 'event publish failed');
    });
  }

  /**
   * The conversation as events show it (with the members preview for DIRECT and GROUP), read
   * back from the store: steps that publish it are barriers, so the store holds all our writes.
   */
  async eventConversationInMailbox(s: ActorState): Promise<EventConversation> {
    const view = await this.env.store.conversations.get(s.conversation, { kind: 'machine' }, MEMBERS_PREVIEW);
    if (!view) throw this.goneInMailbox();
    return eventConversation(view);
  }

  /** Maps a failure: fencing retires the actor; other store failures drop the hot state. */
  private failed(error: unknown): unknown {
    if (error instanceof ActorUnavailableError) return error;
    if (error instanceof StaleEpochError) {
      if (!this.retired) {
        this.retired = new ActorUnavailableError('fenced', this.conversation_id);
        this.state = null;
        this.env.stats.fenced += 1;
        this.onRetire(this);
      }
      return this.retired;
    }
    // A contract error is a refusal decided on the hot state; anything else (a store failure, a
    // bug) leaves us unsure what the store holds: reload before trusting the state again.
    if (!(error instanceof ApiError)) this.state = null;
    // A store out of reach is a plain 503 (not ActorUnavailableError): it crosses the cluster's
    // internal channel as is, and the router does not retry it (another owner meets the same store).
    return error instanceof StoreUnavailableError ? storeUnavailable() : error;
  }

  private touch(): void {
    this.lastActive = this.env.now();
  }
}
