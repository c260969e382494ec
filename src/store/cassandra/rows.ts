/**
 * Converting between driver values and the records' types: Long/bigint to number, Date to the
 * ISO millisecond string the port uses, LocalDate to 'YYYY-MM-DD'. A column the schema keeps
 * non-null for a written row but that comes back null means a row half-written by a lost
 * write; helpers for required columns fail loudly instead of inventing a value.
 */
import type { Row } from './cql.ts';

export function str(row: Row, col: string): string {
  const v = row[col];
  if (typeof v !== 'string') throw new Error(`column ${col}: expected text, got ${v === null || v === undefined ? 'null' : typeof v}`);
  return v;
}

export function strOrNull(row: Row, col: string): string | null {
  const v = row[col];
  return v === null || v === undefined ? null : String(v);
}

/** bigint/int columns: the driver answers Long (bigint) or number (int). Null reads as null. */
export function numOrNull(row: Row, col: string): number | null {
  const v = row[col];
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'object' && typeof (v as { toNumber?: unknown }).toNumber === 'function') return (v as { toNumber(): number }).toNumber();
  throw new Error(`column ${col}: expected a number, got ${typeof v}`);
}

export function num(row: Row, col: string): number {
  const v = numOrNull(row, col);
  if (v === null) throw new Error(`column ${col}: expected a number, got null`);
  return v;
}

export function timeOrNull(row: Row, col: string): string | null {
  const v = row[col];
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'string') return new Date(v).toISOString();
  throw new Error(`column ${col}: expected a timestamp, got ${typeof v}`);
}

export function time(row: Row, col: string): string {
  const v = timeOrNull(row, col);
  if (v === null) throw new Error(`column ${col}: expected a timestamp, got null`);
  return v;
}

/** Bind value of a timestamp column. */
export function ts(iso: string): Date {
  return new Date(iso);
}

export function tsOrNull(iso: string | null): Date | null {
  return iso === null ? null : new Date(iso);
}

/** The UTC day ('YYYY-MM-DD', bound to a `date` column) of an ISO timestamp. */
export function dayOf(iso: string): string {
  return iso.slice(0, 10);
}

export function parseJsonColumn<T>(row: Row, col: string, fallback: T): T {
  const v = row[col];
  return typeof v === 'string' ? (JSON.parse(v) as T) : fallback;
}
