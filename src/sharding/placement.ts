/**
 * Placement: the membership view turned into answers "who owns this conversation, and where do I
 * reach it", plus the handoff on a view change.
 *
 * The ring is rebuilt only when the view changes (a new immutable Ring per view version), so a
 * lookup never sees a half-updated ring.
 *
 * Handoff: when the view changes, conversations this node ran locally and no longer owns are
 * passivated (ActorHost.passivate waits for accepted work, then forgets the actor), so if the
 * ring later moves them back, the next request activates afresh instead of first bouncing off a
 * fenced actor. This is hygiene, not safety: the new owner's claim fences the old actor anyway.
 * The host does not list its actors, so the ids run here are tracked, bounded (least recently
 * used dropped first); an id dropped from tracking while its actor is still held is simply left
 * to the host's idle sweep.
 */
import { Ring } from './ring.ts';
import type { LocalActorHost, MembershipView, NodeInfo, ShardingLog, ViewChange } from './types.ts';

export interface PlacementSource {
  readonly self: NodeInfo;
  readonly view: MembershipView;
  onChange(listener: (change: ViewChange) => void): () => void;
  refresh(): Promise<void>;
}

export type Owner = { kind: 'self' } | { kind: 'remote'; node: NodeInfo } | { kind: 'none' };

export class Placement {
  private ring: Ring;
  private byId: Map<string, NodeInfo>;
  private readonly tracked = new Map<string, true>();
  private readonly unsubscribe: () => void;
  private readonly peerListeners = new Set<(live: ReadonlySet<string>) => void>();

  constructor(
    private readonly membership: PlacementSource,
    private readonly host: LocalActorHost,
    private readonly log: ShardingLog,
    private readonly trackLimit = 50_000,
  ) {
    this.ring = new Ring([], 0);
    this.byId = new Map();
    this.rebuild(membership.view);
    this.unsubscribe = membership.onChange((change) => this.changed(change));
  }

  get selfId(): string {
    return this.membership.self.nodeId;
  }

  get version(): number {
    return this.ring.version;
  }

  owner(conversation_id: string): Owner {
    const id = this.ring.owner(conversation_id);
    if (id === null) return { kind: 'none' };
    if (id === this.selfId) return { kind: 'self' };
    const node = this.byId.get(id);
    return node ? { kind: 'remote', node } : { kind: 'none' };
  }

  /** Records that this node ran `conversation_id` locally (its actor may be held). */
  touched(conversation_id: string): void {
    this.tracked.delete(conversation_id);
    this.tracked.set(conversation_id, true);
    if (this.tracked.size > this.trackLimit) {
      const oldest = this.tracked.keys().next();
      if (!oldest.done) this.tracked.delete(oldest.value);
    }
  }

  /** Asks membership for a fresh view (a peer disagreed about ownership). */
  suspectStale(): Promise<void> {
    return this.membership.refresh();
  }

  /** Called with the live internal URLs after every change (the forward client drops dead peers). */
  onPeers(listener: (liveUrls: ReadonlySet<string>) => void): void {
    this.peerListeners.add(listener);
  }

  close(): void {
    this.unsubscribe();
    this.peerListeners.clear();
  }

  private rebuild(view: MembershipView): void {
    this.ring = new Ring(
      view.nodes.map((n) => n.nodeId),
      view.version,
    );
    this.byId = new Map(view.nodes.map((n) => [n.nodeId, n]));
  }

  private changed(change: ViewChange): void {
    this.rebuild(change.view);
    const urls = new Set(change.view.nodes.map((n) => n.internalUrl));
    for (const listener of this.peerListeners) listener(urls);
    const moved: string[] = [];
    for (const id of this.tracked.keys()) {
      if (this.owner(id).kind !== 'self') moved.push(id);
    }
    for (const id of moved) {
      this.tracked.delete(id);
      this.host.passivate(id).catch((err: unknown) => this.log.warn({ conversation_id: id, err: (err as Error).message }, 'sharding: passivating a moved conversation failed'));
    }
    if (moved.length > 0) this.log.info({ version: change.view.version, moved: moved.length }, 'sharding: handed off conversations after a view change');
  }
}
