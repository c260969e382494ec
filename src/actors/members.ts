/**
 * The ACTIVE members an actor keeps hot, for membership checks and fan-out.
 *
 * Every membership change of a conversation goes through its actor, so the actor's copy cannot
 * go stale while it owns the conversation; it is rebuilt from the store at each activation.
 *
 *  - complete: DIRECT and GROUP conversations of up to `maxHeld` members hold every ACTIVE user
 *    id; checks and fan-out never touch the store.
 *  - partial: CHANNELs (fan-out goes to the conversation channel, so the full list is never
 *    needed) and larger GROUPs hold a bounded LRU of answers; a miss reads the member row, and
 *    a large GROUP's fan-out pages the member list from the store.
 *
 * Memory per actor is thus at most max(maxHeld, LRU_SIZE) ids.
 */
import type { ChatStore, ConversationRecord, ConversationRef, MemberPosition } from '../store/index.ts';

const LRU_SIZE = 512;
const PAGE = 1000;

export class MemberSet {
  private constructor(
    /** complete: the ACTIVE ids; partial: null. */
    private active: Set<string> | null,
    /** partial: user id -> is ACTIVE, most recently used last. */
    private readonly known: Map<string, boolean>,
    private readonly maxHeld: number,
  ) {}

  /** Loads the set for an activating actor. */
  static async load(store: ChatStore, conv: ConversationRecord, maxHeld: number): Promise<MemberSet> {
    if (conv.type === 'CHANNEL' || conv.member_count > maxHeld) return new MemberSet(null, new Map(), maxHeld);
    const ids = new Set<string>();
    for await (const page of activePages(store, conv)) for (const id of page) ids.add(id);
    return new MemberSet(ids, new Map(), maxHeld).trimmed();
  }

  /** The set of a conversation just created with these members, all ACTIVE. */
  static created(conv: ConversationRecord, userIds: readonly string[], maxHeld: number): MemberSet {
    const complete = conv.type !== 'CHANNEL' && userIds.length <= maxHeld;
    return new MemberSet(complete ? new Set(userIds) : null, new Map(), maxHeld);
  }

  get complete(): boolean {
    return this.active !== null;
  }

  async isActive(store: ChatStore, ref: ConversationRef, user_id: string): Promise<boolean> {
    if (this.active) return this.active.has(user_id);
    const cached = this.known.get(user_id);
    if (cached !== undefined) {
      this.remember(user_id, cached);
      return cached;
    }
    const row = await store.members.get(ref, user_id);
    const active = row?.status === 'ACTIVE';
    this.remember(user_id, active);
    return active;
  }

  /** Records a membership change the actor just committed. */
  set(user_id: string, active: boolean): void {
    if (this.active) {
      if (active) this.active.add(user_id);
      else this.active.delete(user_id);
      this.trimmed();
    } else this.remember(user_id, active);
  }

  /** The ACTIVE user ids when the set is complete (read-only view); null when partial. */
  activeIfComplete(): ReadonlySet<string> | null {
    return this.active;
  }

  /** Every ACTIVE user id: from memory when complete, else paged from the store. */
  async activeIds(store: ChatStore, ref: ConversationRef): Promise<Iterable<string>> {
    if (this.active) return this.active;
    const ids: string[] = [];
    for await (const page of activePages(store, ref)) ids.push(...page);
    return ids;
  }

  /** A complete set that outgrew the bound becomes partial (the store answers from then on). */
  private trimmed(): this {
    if (this.active && this.active.size > this.maxHeld) this.active = null;
    return this;
  }

  private remember(user_id: string, active: boolean): void {
    this.known.delete(user_id);
    this.known.set(user_id, active);
    if (this.known.size > LRU_SIZE) this.known.delete(this.known.keys().next().value!);
  }
}

async function* activePages(store: ChatStore, ref: ConversationRef): AsyncGenerator<string[]> {
  let after: MemberPosition | null = null;
  do {
    const page = await store.members.list({ tenant_id: ref.tenant_id, application_id: ref.application_id, conversation_id: ref.conversation_id, limit: PAGE, after });
    if (!page) return;
    yield page.items.map((m) => m.user_id);
    after = page.next;
  } while (after !== null);
}
