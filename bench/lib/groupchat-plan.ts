/**
 * Which conversation and which member send message `seq` in the `groupchat` bench: a pure
 * function of (seed, seq), so the sender process (post-worker.ts) and the harness (which tells
 * the SSE receivers what each stream must get) agree without exchanging the plan.
 */

/** 32-bit mix of (seed, seq) (the finalizer of MurmurHash3): uniform enough for picking. */
function mix(seed: number, seq: number): number {
  let h = (seed ^ Math.imul(seq, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export interface GroupchatPlan {
  groups: number;
  members: number;
  seed: number;
}

/** The conversation (0 .. groups-1) message `seq` goes to. */
export function groupOf(plan: GroupchatPlan, seq: number): number {
  return mix(plan.seed, seq) % plan.groups;
}

/** The member (0 .. members-1) of that conversation who sends it. */
export function senderOf(plan: GroupchatPlan, seq: number): number {
  return Math.floor(mix(plan.seed, seq) / plan.groups) % plan.members;
}

/** The user id of member `m` of conversation `g`: bench users are generated, one per stream. */
export function benchUser(g: number, m: number): string {
  return `gc${g}u${m}`;
}

/** The marker the receivers scan for (sse-client-worker.ts): `~F<seq>.<scheduled send time, epoch µs>~`. */
export function marker(seq: number, sendUs: number): string {
  return `~F${seq}.${sendUs}~`;
}
