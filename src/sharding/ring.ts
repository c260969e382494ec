/**
 * Placement: rendezvous (highest random weight) hashing over the live node ids.
 *
 * Every node scores every (node, conversation) pair with the same hash and the conversation goes
 * to the highest score. Why rendezvous rather than a ring of virtual nodes:
 *  - minimal movement by construction: a joining node takes exactly the keys it now wins (about
 *    K/(N+1)), a leaving node's keys spread over the survivors, and no other key moves, with no
 *    vnode count to tune for balance;
 *  - the owner depends only on the set of ids, never on insertion order or a token layout, so
 *    every node with the same view computes the same owner;
 *  - a lookup is O(N) integer work (no sorting, no allocation); for tens of nodes that is well
 *    under a microsecond, so no lookup cache is kept.
 *
 * The hash is 32-bit: FNV-1a over the UTF-16 code units, finished with murmur3's fmix32. The score
 * mixes the key hash with a per-node hash through fmix32, a bijection, so for one key two nodes
 * with distinct node hashes never tie; a tie on equal node hashes (a 32-bit collision of two
 * ids) falls back to comparing the ids, which keeps the answer deterministic.
 */

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

export class Ring {
  /** Node ids sorted, so equal sets give equal rings whatever order they came in. */
  readonly nodes: readonly string[];
  private readonly seeds: Uint32Array;

  constructor(
    nodeIds: Iterable<string>,
    /** The membership view version this ring was built from (for logs and stale-view checks). */
    readonly version = 0,
  ) {
    this.nodes = [...new Set(nodeIds)].sort();
    // The node's hash goes through one more mixing round so that score = fmix32(key ^ seed) is
    // not the key hash shifted by a value correlated with it.
    this.seeds = Uint32Array.from(this.nodes, (id) => fmix32(hash32(id) + 0x9e3779b9));
  }

  get size(): number {
    return this.nodes.length;
  }

  has(nodeId: string): boolean {
    return this.nodes.includes(nodeId);
  }

  /** The node owning `key`; null only when the ring is empty. */
  owner(key: string): string | null {
    const k = hash32(key);
    let best = -1;
    let bestScore = -1;
    for (let i = 0; i < this.seeds.length; i++) {
      const score = fmix32(k ^ (this.seeds[i] as number));
      // Ids are sorted ascending and a strict `>` keeps the first, so on a tie the smaller id wins.
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    return best < 0 ? null : (this.nodes[best] as string);
  }
}
