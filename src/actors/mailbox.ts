/**
 * A mailbox: tasks run one at a time, in the order they were posted. A task's failure is its
 * caller's only; the next task runs regardless. See conversation-actor.ts for what the
 * conversation actor builds on it.
 */
export class Mailbox {
  private readonly queue: Array<() => Promise<void>> = [];
  private running = false;
  /** Posted and not finished; drops before the caller hears back, so `idle` is exact then. */
  private pending = 0;

  /** No task is running or waiting. */
  get idle(): boolean {
    return this.pending === 0;
  }

  /** Tasks waiting behind the running one. */
  get depth(): number {
    return this.queue.length;
  }

  post<T>(task: () => Promise<T>): Promise<T> {
    this.pending += 1;
    return new Promise<T>((resolve, reject) => {
      this.queue.push(async () => {
        let outcome: { ok: true; value: T } | { ok: false; error: unknown };
        try {
          outcome = { ok: true, value: await task() };
        } catch (error) {
          outcome = { ok: false, error };
        }
        this.pending -= 1;
        if (outcome.ok) resolve(outcome.value);
        else reject(outcome.error);
      });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let task = this.queue.shift(); task; task = this.queue.shift()) await task();
    } finally {
      this.running = false;
    }
  }
}
