/**
 * A self-signed certificate for the push stand-ins, made with `openssl` (P-256, valid for
 * 127.0.0.1, usable as its own CA): the code under test trusts it through `caFile`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCert {
  dir: string;
  key: Buffer;
  cert: Buffer;
  /** The certificate's file: the CA file to trust. */
  caFile: string;
}

export function selfSignedCert(prefix: string): TestCert {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-addext', 'basicConstraints=critical,CA:TRUE',
  ], { stdio: 'ignore' });
  return { dir, key: fs.readFileSync(key), cert: fs.readFileSync(cert), caFile: cert };
}

/** Polls `pred` every 20 ms; rejects after `ms` with `what()` in the message. */
export async function waitUntil(pred: () => boolean, what: () => string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
