/**
 * What a node learnt of who is online, to skip asking again: a user seen online with last
 * heartbeat `s` stays online until `s + windowMs` whatever happens meanwhile (heartbeats only
 * move `last_seen_at` forward, presence/types.ts), so until then the answer is known without a
 * round trip. The send path asks whether every push candidate of a message is online (then no
 * push job): with this, a GROUP message to online members costs presence nothing, instead of a
 * ZMSCORE of all its members on Redis per message.
 *
 * Only `online` is remembered (offline may end with the next heartbeat on any node). Memory:
 * one number per user seen online, dropped when stale and all at once past `maxEntries`. A
 * Redis that lost its presence data (a failover) would answer offline for a while where this
 * still says online: those users' pushes are skipped until their window ends (push is best
 * effort; they were online a moment ago).
 */
import type { Presence } from './types.ts';

export class OnlineMemo {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly presence: Presence,
    private readonly maxEntries = 100_000,
  ) {}

  /** True when every one of `user_ids` is online at `now`; asks the driver only when unsure. */
  allOnline(tenant_id: string, user_ids: readonly string[], now: number): true | Promise<boolean> {
    let unsure = false;
    for (const id of user_ids) {
      const until = this.until.get(`${tenant_id}\n${id}`);
      if (until === undefined || until < now) {
        unsure = true;
        break;
      }
    }
    if (!unsure) return true;
    return this.presence.statuses(tenant_id, user_ids, now).then((entries) => {
      let all = true;
      for (const e of entries) {
        const key = `${tenant_id}\n${e.user_id}`;
        if (e.status === 'online' && e.last_seen_at !== null) {
          if (this.until.size >= this.maxEntries) this.until.clear();
          this.until.set(key, Date.parse(e.last_seen_at) + this.presence.windowMs);
        } else {
          all = false;
          this.until.delete(key);
        }
      }
      return all;
    });
  }
}
