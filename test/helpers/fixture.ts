/**
 * IdP fixtures for tests: the demo fixture with a freshly generated signing key (fixture
 * `signing_keys`), so a test can sign tokens with the IdP's real key, and optional changes such as
 * extra machine clients. Written to a temp file for CHAT_IDP_FIXTURE / IDP_FIXTURE.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import { DEFAULT_FIXTURE } from '../../src/config/index.ts';
import type { FixtureInput, FixtureSigningKey } from '../../src/idp/fixture-schema.ts';

/** A machine client to add; its secret defaults to `<client_id>-secret` (what helpers/tokens.ts sends). */
export interface ExtraMachineClient {
  client_id: string;
  client_secret?: string;
  tenant_id: string;
  application_id: string;
  scopes: string[];
  token_ttl_seconds?: number;
}

export interface FixtureOverrides {
  machineClients?: ExtraMachineClient[];
  /** Any other change, applied last to the parsed demo fixture. */
  edit?: (fixture: FixtureInput) => void;
}

export interface TestFixture {
  path: string;
  /** The IdP's signing key (private JWK with kid). */
  privateJwk: FixtureSigningKey;
  /** Deletes the temp directory holding the file. */
  remove(): Promise<void>;
}

export function generateSigningKey(kid = `test-${randomBytes(6).toString('base64url')}`): FixtureSigningKey {
  const { kty, crv, x, y, d } = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  if (kty !== 'EC' || crv !== 'P-256' || !x || !y || !d) throw new Error('unexpected JWK export');
  return { kty, crv, x, y, d, kid };
}

export async function writeTestFixture(overrides: FixtureOverrides = {}): Promise<TestFixture> {
  const fixture = JSON.parse(await readFile(DEFAULT_FIXTURE, 'utf8')) as FixtureInput;
  const privateJwk = generateSigningKey();
  fixture.signing_keys = [privateJwk];
  for (const c of overrides.machineClients ?? []) {
    fixture.clients.push({ kind: 'machine', ...c, client_secret: c.client_secret ?? `${c.client_id}-secret` });
  }
  overrides.edit?.(fixture);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'chat-fixture-'));
  const file = path.join(dir, 'fixture.json');
  await writeFile(file, JSON.stringify(fixture, null, 2), { mode: 0o600 });
  return { path: file, privateJwk, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Signs `claims` as the IdP would (ES256, the key's kid, `typ: at+jwt` unless told otherwise). */
export async function signToken(key: FixtureSigningKey, claims: JWTPayload, header: { typ?: string; kid?: string } = {}): Promise<string> {
  const privateKey = await importJWK(key, 'ES256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: header.kid ?? key.kid, typ: header.typ ?? 'at+jwt' }).sign(privateKey);
}
