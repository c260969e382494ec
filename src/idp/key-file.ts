/**
 * The development IdP's signing keys kept in its data directory (`idp-signing-keys.json`, mode
 * 0600), as the node keeps its VAPID keys: a restarted IdP signs with the same key, so tokens it
 * issued before the restart keep verifying. Only `POST /dev/rotate-keys` makes a new key; the
 * retired ones are kept in the file, with when they retired, for as long as tokens they signed
 * may live.
 *
 * File: `{"keys": [{"kty","crv","x","y","d","kid", "retired_at": <epoch ms> | null}, ...]}`; the
 * one key with `retired_at: null` signs. The first start writes a generated key: a temporary file
 * linked into place, so a crash never leaves half a key and, of processes sharing the directory,
 * the first link wins and the others load the winner's key. Rotations replace the file by rename.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FixtureSigningKey } from './fixture-schema.ts';

export const KEY_FILE_NAME = 'idp-signing-keys.json';

export interface StoredKey {
  jwk: FixtureSigningKey;
  /** Epoch ms when a newer key took over; null for the signing key. */
  retiredAt: number | null;
}

/** The keys in `file`, or null when there is none yet. Throws on a file that is not a key file. */
export function readKeyFile(file: string): StoredKey[] | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const bad = (why: string): Error => new Error(`${file} is not an IdP signing key file (${why}); move it away to start with a new key`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const keys = (doc as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0) throw bad('no "keys"');
  const out: StoredKey[] = keys.map((k: unknown, i) => {
    const o = (typeof k === 'object' && k !== null ? k : {}) as Record<string, unknown>;
    for (const f of ['kty', 'crv', 'x', 'y', 'd', 'kid']) if (typeof o[f] !== 'string' || o[f] === '') throw bad(`keys[${i}].${f} missing`);
    const retired = o.retired_at;
    if (retired !== null && typeof retired !== 'number') throw bad(`keys[${i}].retired_at must be a number or null`);
    return { jwk: { kty: o.kty, crv: o.crv, x: o.x, y: o.y, d: o.d, kid: o.kid } as FixtureSigningKey, retiredAt: retired };
  });
  if (out.filter((k) => k.retiredAt === null).length !== 1) throw bad('exactly one key must have retired_at null');
  return out;
}

function render(keys: readonly StoredKey[]): string {
  return `${JSON.stringify({ keys: keys.map((k) => Object.assign({}, k.jwk, { retired_at: k.retiredAt })) }, null, 2)}\n`;
}

/**
 * Writes the first key unless another process did first: answers the keys now in the file (the
 * given ones, or the winner's).
 */
export function createKeyFile(file: string, keys: readonly StoredKey[]): StoredKey[] {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, render(keys), { mode: 0o600 });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return readKeyFile(file) as StoredKey[];
}

/** Replaces the file's keys (after a rotation). */
export function replaceKeyFile(file: string, keys: readonly StoredKey[]): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, render(keys), { mode: 0o600 });
  fs.renameSync(tmp, file);
}
