/**
 * The web push worker: consumes PushJobs (one per new message) from the bus work queue, off the
 * send path — the actor only enqueues, so a slow or failing push service never slows or fails a
 * send.
 *
 * Per job: load the message and its conversation (gone, deleted or a tombstone: nothing to do);
 * candidates (candidates.ts) minus users online (presence); every registered `web` device of each
 * (fcm and apns tokens are stored but not delivered: this service holds no FCM/APNs credentials);
 * the Push notification document (payload.ts) encrypted per subscription.
 *
 * Failures: 404/410 prunes the subscription (store.pushDevices.deleteEndpoint); 429/5xx/network
 * errors make the handler reject, so the work queue retries the job with its backoff. A retry
 * sends only to the devices not yet served by an earlier attempt of the same job on this node
 * (remembered in a bounded map), so a flaky device does not make the others receive twice.
 */
import type { ChatBus, PushJob } from '../actors/events.ts';
import type { Presence } from '../presence/index.ts';
import type { ChatStore, ConversationRecord, ConversationRef, MessageView } from '../store/index.ts';
import { pushCandidates } from './candidates.ts';
import { pushDocument } from './payload.ts';
import { RetryablePushError, type PushSender } from './web-push-sender.ts';

export interface PushWorkerLog {
  warn(obj: Record<string, unknown>, msg: string): void;
  debug(obj: Record<string, unknown>, msg: string): void;
}

export interface PushWorkerOptions {
  bus: ChatBus;
  store: ChatStore;
  presence: Presence;
  sender: PushSender;
  concurrency: number;
  log: PushWorkerLog;
  now?: () => number;
}

export interface PushWorkerStats {
  jobs: number;
  sent: number;
  pruned: number;
  rejected: number;
  retried: number;
  skippedOnline: number;
}

/** Jobs whose partial delivery is remembered for their retries. */
const MAX_REMEMBERED_JOBS = 10_000;

export class PushWorker {
  readonly stats: PushWorkerStats = { jobs: 0, sent: 0, pruned: 0, rejected: 0, retried: 0, skippedOnline: 0 };
  private readonly served = new Map<string, Set<string>>();
  private readonly now: () => number;
  private stop: (() => Promise<void>) | null = null;

  constructor(private readonly o: PushWorkerOptions) {
    this.now = o.now ?? Date.now;
  }

  start(): void {
    this.stop ??= this.o.bus.consume((job, ctx) => this.handle(job, ctx.attempt), { concurrency: this.o.concurrency });
  }

  /** Stops taking jobs; resolves when running ones finished. */
  async close(): Promise<void> {
    const stop = this.stop;
    this.stop = null;
    if (stop) await stop();
    this.o.sender.close();
  }

  async handle(job: PushJob, attempt = 1): Promise<void> {
    if (attempt === 1) this.stats.jobs += 1;
    const { store, presence } = this.o;
    const ref: ConversationRef = { tenant_id: job.tenant_id, application_id: job.application_id, conversation_id: job.conversation_id };
    // Cheapest filter first: most candidates of most messages have no web device at all, and
    // then the job costs one indexed read (the actor sent the candidates along when it knew them).
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
    const withDevice = (await store.pushDevices.listForUsers(job.tenant_id, candidates)).filter((d) => d.platform === 'web' && d.p256dh !== null && d.auth !== null);
    if (withDevice.length === 0) return;

    const owners = [...new Set(withDevice.map((d) => d.user_id))];
    const statuses = await presence.statuses(job.tenant_id, owners, this.now());
    const offline = new Set(statuses.filter((s) => s.status === 'offline').map((s) => s.user_id));
    this.stats.skippedOnline += owners.length - offline.size;
    const devices = withDevice.filter((d) => offline.has(d.user_id));
    if (devices.length === 0) return;

    conversation ??= await store.conversations.get(ref, { kind: 'machine' }, 0);
    if (conversation === null) return;
    message ??= await store.messages.get(ref, job.message_id, null);
    if (message === null || message.status === 'DELETED') return;
    const payload = JSON.stringify(pushDocument(message, conversation));
    const served = this.served.get(job.message_id) ?? new Set<string>();

    const retryable: RetryablePushError[] = [];
    await Promise.all(
      devices.map(async (d) => {
        if (served.has(d.token_or_endpoint)) return;
        try {
          const r = await this.o.sender.send({ endpoint: d.token_or_endpoint, p256dh: d.p256dh as string, auth: d.auth as string }, payload);
          served.add(d.token_or_endpoint);
          if (r.outcome === 'sent') this.stats.sent += 1;
          else if (r.outcome === 'gone') {
            this.stats.pruned += await store.pushDevices.deleteEndpoint(d.token_or_endpoint);
          } else {
            this.stats.rejected += 1;
            this.o.log.warn({ status: r.statusCode, tenant_id: d.tenant_id }, 'push service refused a notification');
          }
        } catch (err) {
          if (!(err instanceof RetryablePushError)) throw err;
          retryable.push(err);
        }
      }),
    );
    if (retryable.length > 0) {
      this.stats.retried += 1;
      this.remember(job.message_id, served);
      this.o.log.debug({ failed: retryable.length, attempt, status: retryable[0]?.statusCode ?? null }, 'push delivery will be retried');
      throw retryable[0];
    }
    this.served.delete(job.message_id);
  }

  private remember(message_id: string, served: Set<string>): void {
    this.served.delete(message_id);
    this.served.set(message_id, served);
    if (this.served.size > MAX_REMEMBERED_JOBS) {
      const oldest = this.served.keys().next().value;
      if (oldest !== undefined) this.served.delete(oldest);
    }
  }
}
