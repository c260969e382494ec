/**
 * The push worker: consumes PushJobs (one per new message) from the bus work queue, off the send
 * path — the actor only enqueues, so a slow or failing push service never slows or fails a send.
 *
 * Per job: load the message and its conversation (gone, deleted or a tombstone: nothing to do);
 * candidates (candidates.ts); their devices registered by the time the message was sent (a
 * device registered later, even before a retry or a late first attempt, never receives an older
 * message), each delivered by the sender of its
 * platform (`web`, `fcm`, `apns`; a platform this node has no sender for is skipped, counted and
 * logged once); devices of users online (presence) are dropped; the Push notification document
 * (payload.ts) goes to every remaining device.
 *
 * Failures: `gone` prunes the device (store.pushDevices.deleteEndpoint); RetryablePushError from
 * any device makes the handler reject with a RetryablePushError carrying the longest Retry-After
 * asked, so the work queue retries the job (no sooner than asked, with pushRetryPolicy). A retry
 * sends only to the devices not yet served by an earlier attempt of the same job on this node
 * (remembered in a bounded map with the earliest time the push services allowed), so a flaky
 * device does not make the others receive twice; a retry that comes before that time (a bus
 * not configured with pushRetryPolicy) sends nothing and is handed back.
 */
import type { ChatBus, PushJob } from '../actors/events.ts';
import type { Presence } from '../presence/index.ts';
import type { ChatStore, ConversationRecord, ConversationRef, MessageView, PushDevice, PushPlatform } from '../store/index.ts';
import { pushCandidates } from './candidates.ts';
import { pushDocument, type PushDocument } from './payload.ts';
import { RetryablePushError, type PushSender, type PushSenders } from './sender.ts';

export interface PushWorkerLog {
  warn(obj: Record<string, unknown>, msg: string): void;
  debug(obj: Record<string, unknown>, msg: string): void;
}

export interface PushWorkerOptions {
  bus: ChatBus;
  store: ChatStore;
  presence: Presence;
  /** The sender of each platform this node delivers; devices of the others are skipped. */
  senders: PushSenders;
  concurrency: number;
  log: PushWorkerLog;
  now?: () => number;
}

/** Per platform, counted per device (retried: per job attempt that failed on the platform). */
export interface PushOutcomeCounts {
  sent: number;
  pruned: number;
  rejected: number;
  retried: number;
  skippedOnline: number;
  skippedUnconfigured: number;
}

export interface PushWorkerStats {
  jobs: number;
  platforms: Record<PushPlatform, PushOutcomeCounts>;
}

export const PUSH_PLATFORMS: readonly PushPlatform[] = ['web', 'fcm', 'apns'];
/** Jobs whose partial delivery is remembered for their retries. */
const MAX_REMEMBERED_JOBS = 10_000;

interface Remembered {
  served: Set<string>;
  /** Epoch ms before which the push services asked not to be called again. */
  notBefore: number;
}

const zero = (): PushOutcomeCounts => ({ sent: 0, pruned: 0, rejected: 0, retried: 0, skippedOnline: 0, skippedUnconfigured: 0 });

export class PushWorker {
  readonly stats: PushWorkerStats = { jobs: 0, platforms: { web: zero(), fcm: zero(), apns: zero() } };
  private readonly senders: PushSenders;
  private readonly remembered = new Map<string, Remembered>();
  private readonly unconfiguredLogged = new Set<PushPlatform>();
  private readonly now: () => number;
  private stop: (() => Promise<void>) | null = null;

  constructor(private readonly o: PushWorkerOptions) {
    this.now = o.now ?? Date.now;
    this.senders = { ...o.senders };
  }

  /** The platforms this worker delivers. */
  get platforms(): PushPlatform[] {
    return PUSH_PLATFORMS.filter((p) => this.senders[p] !== undefined);
  }

  start(): void {
    this.stop ??= this.o.bus.consume((job, ctx) => this.handle(job, ctx.attempt), { concurrency: this.o.concurrency });
  }

  /** Stops taking jobs; resolves when running ones finished. */
  async close(): Promise<void> {
    const stop = this.stop;
    this.stop = null;
    if (stop) await stop();
    for (const p of PUSH_PLATFORMS) this.senders[p]?.close();
  }

  async handle(job: PushJob, attempt = 1): Promise<void> {
    if (attempt === 1) this.stats.jobs += 1;
    const earlier = this.remembered.get(job.message_id);
    if (earlier !== undefined && this.now() < earlier.notBefore) {
      throw new RetryablePushError('push services asked to wait longer (Retry-After)', null, earlier.notBefore - this.now());
    }
    const { store, presence } = this.o;
    const ref: ConversationRef = { tenant_id: job.tenant_id, application_id: job.application_id, conversation_id: job.conversation_id };
    // Cheapest filter first: most candidates of most messages have no device at all, and then
    // the job costs one indexed read (the actor sent the candidates along when it knew them).
    let conversation: ConversationRecord | null = null;
    let message: MessageView | null = null;
    let candidates = job.candidates;
    if (candidates === undefined) {
      conversation = await store.conversations.get(ref, { kind: 'machine' }, 0);
      if (conversation === null) return;
      message = await store.messages.get(ref, job.message_id, null);
      if (message === null || message.status === 'DELETED') return;
      candidates = await pushCandidates(store, ref, conversation, message);
    }
    if (candidates.length === 0) return;
    let sentAt = job.sent_at;
    if (sentAt === undefined) {
      message ??= await store.messages.get(ref, job.message_id, null);
      if (message === null || message.status === 'DELETED') return;
      sentAt = message.created_at;
    }
    const sentMs = Date.parse(sentAt);
    const served = earlier?.served ?? new Set<string>();
    const pending = (await store.pushDevices.listForUsers(job.tenant_id, candidates)).filter(
      (d) => !served.has(d.token_or_endpoint) && Date.parse(d.created_at) <= sentMs && this.deliverable(d, attempt),
    );
    if (pending.length === 0) return this.forget(job.message_id);

    const owners = [...new Set(pending.map((d) => d.user_id))];
    const statuses = await presence.statuses(job.tenant_id, owners, this.now());
    const offline = new Set(statuses.filter((s) => s.status === 'offline').map((s) => s.user_id));
    const devices: PushDevice[] = [];
    for (const d of pending) {
      if (offline.has(d.user_id)) devices.push(d);
      else this.stats.platforms[d.platform].skippedOnline += 1;
    }
    if (devices.length === 0) return this.forget(job.message_id);

    conversation ??= await store.conversations.get(ref, { kind: 'machine' }, 0);
    if (conversation === null) return;
    message ??= await store.messages.get(ref, job.message_id, null);
    if (message === null || message.status === 'DELETED') return;
    const document = pushDocument(message, conversation);

    const failures = await Promise.all(devices.map((d) => this.deliver(d, document, served)));
    const retryable = failures.filter((f): f is RetryablePushError => f instanceof RetryablePushError);
    const bug = failures.find((f) => f !== null && !(f instanceof RetryablePushError));
    if (retryable.length === 0 && bug === undefined) return this.forget(job.message_id);
    const waitMs = Math.max(0, ...retryable.map((e) => e.retryAfterMs ?? 0));
    this.remember(job.message_id, { served, notBefore: this.now() + waitMs });
    for (const p of new Set(devices.filter((_, i) => failures[i] !== null).map((d) => d.platform))) this.stats.platforms[p].retried += 1;
    if (bug !== undefined) throw bug;
    const first = retryable[0] as RetryablePushError;
    this.o.log.debug({ failed: retryable.length, attempt, status: first.statusCode, retry_after_ms: waitMs || null }, 'push delivery will be retried');
    throw new RetryablePushError(`${retryable.length} of ${devices.length} push deliveries failed, first: ${first.message}`, first.statusCode, waitMs > 0 ? waitMs : null);
  }

  /** Whether this node has a sender for the device's platform; counted and logged when not. */
  private deliverable(d: PushDevice, attempt: number): boolean {
    if (this.senders[d.platform] !== undefined) return true;
    if (attempt === 1) this.stats.platforms[d.platform].skippedUnconfigured += 1;
    if (!this.unconfiguredLogged.has(d.platform)) {
      this.unconfiguredLogged.add(d.platform);
      this.o.log.warn({ platform: d.platform }, 'push devices of a platform this node has no credentials for are skipped');
    }
    return false;
  }

  /** Sends to one device; answers the failure to retry for, or null when done with it. */
  private async deliver(d: PushDevice, document: PushDocument, served: Set<string>): Promise<unknown> {
    const counts = this.stats.platforms[d.platform];
    try {
      const r = await (this.senders[d.platform] as PushSender).send(d, document);
      served.add(d.token_or_endpoint);
      if (r.outcome === 'sent') counts.sent += 1;
      else if (r.outcome === 'gone') {
        // Awaited before the +=, which would otherwise add to a count read before the await.
        const removed = await this.o.store.pushDevices.deleteEndpoint(d.token_or_endpoint);
        counts.pruned += removed;
      } else {
        counts.rejected += 1;
        this.o.log.warn({ platform: d.platform, status: r.statusCode, reason: r.reason ?? null, tenant_id: d.tenant_id }, 'push service refused a notification');
      }
      return null;
    } catch (err) {
      return err;
    }
  }

  /** The job is done: nothing left to remember for a retry. */
  private forget(message_id: string): void {
    this.remembered.delete(message_id);
  }

  private remember(message_id: string, entry: Remembered): void {
    this.remembered.delete(message_id);
    this.remembered.set(message_id, entry);
    if (this.remembered.size > MAX_REMEMBERED_JOBS) {
      const oldest = this.remembered.keys().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
  }
}
