/**
 * Push jobs the work queue gave up (attempts exhausted, or a Retry-After longer than a
 * notification is worth: retry.ts): counted for `chat_push_jobs_given_up_total`, and logged with
 * what names the message, so an operator can tell whose notification was lost.
 */
import type { PushJob } from '../actors/events.ts';

export interface GiveUpLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

export class PushGiveUps {
  count = 0;

  constructor(private readonly log: GiveUpLog) {}

  /** The bus's `onGiveUp` hook. */
  readonly handle = (job: unknown, error: unknown): void => {
    this.count += 1;
    const j: Partial<PushJob> = typeof job === 'object' && job !== null ? (job as Partial<PushJob>) : {};
    this.log.warn(
      {
        tenant_id: j.tenant_id ?? null,
        application_id: j.application_id ?? null,
        conversation_id: j.conversation_id ?? null,
        message_id: j.message_id ?? null,
        err: error instanceof Error ? error.message : String(error),
        given_up: this.count,
      },
      'push job given up',
    );
  };
}
