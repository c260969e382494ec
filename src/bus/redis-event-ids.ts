/**
 * Ids and timings of the Redis event streams (redis-event-streams.ts): an event id is
 * `<epoch>-<ms>-<seq>`, the stream entry id under the history's epoch (a random decimal token).
 */
import { randomInt } from 'node:crypto';

export interface Position {
  epoch: string;
  ms: number;
  seq: number;
}

/** `<epoch>-<ms>-<seq>`; 15 digits keep ms and seq exact in Lua's doubles. */
const ID = /^(\d{1,20})-(\d{1,15})-(\d{1,15})$/;

export function parseId(id: string): Position | null {
  const m = ID.exec(id);
  return m ? { epoch: m[1]!, ms: Number(m[2]), seq: Number(m[3]) } : null;
}

/** Orders two entry positions of one epoch (`<ms>-<seq>`): negative, 0 or positive. */
export function compare(ams: number, aseq: number, bms: number, bseq: number): number {
  return ams !== bms ? ams - bms : aseq - bseq;
}

/** A random decimal token of 16 digits: the epoch of a new history. */
export function newEpoch(): string {
  return `${randomInt(10_000_000, 100_000_000)}${String(randomInt(0, 100_000_000)).padStart(8, '0')}`;
}

/** Time-to-live of a channel's keys past its last publish: the window's age plus a margin. */
export function ttlOf(maxAgeMs: number): number {
  return maxAgeMs + Math.max(1000, Math.ceil(maxAgeMs / 10));
}
