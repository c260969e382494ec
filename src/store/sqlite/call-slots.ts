/**
 * The writer thread's calls awaiting their answer, by id: a table of slots with a free list, so a
 * call costs no allocation here once the table has grown to the calls in flight.
 *
 * A Map keyed by a counter did the same job, but every insert and delete of a long-lived Map
 * churns its hash table: tables were rebuilt every few hundred calls, lived long enough to be
 * promoted out of the young generation, and added to the major GCs that made the send path's
 * tail (docs/benchmarks.md, "What the sixth session found"). An id is reused only after its call
 * was settled, and each call is answered once (a late duplicate answer would find its slot empty
 * or, after reuse, settle the wrong call: the protocol never sends one).
 */
export class CallSlots<T> {
  private readonly slots: Array<T | undefined> = [];
  private readonly free: number[] = [];

  /** Calls in flight: every slot but the free ones. */
  get size(): number {
    return this.slots.length - this.free.length;
  }

  /** Stores `value`; answers the id that takes it back. */
  add(value: T): number {
    const id = this.free.length > 0 ? this.free.pop()! : this.slots.length;
    this.slots[id] = value;
    return id;
  }

  /** The value of `id`, removed; undefined when `id` holds nothing. */
  take(id: number): T | undefined {
    const value = this.slots[id];
    if (value === undefined) return undefined;
    this.slots[id] = undefined;
    this.free.push(id);
    return value;
  }

  /** The ids in flight (a copy: taking them while iterating is safe). */
  ids(): number[] {
    const out: number[] = [];
    for (let id = 0; id < this.slots.length; id += 1) if (this.slots[id] !== undefined) out.push(id);
    return out;
  }
}
