/**
 * Node secrets (cursor signing, realtime credentials): configured, or generated once and kept in
 * the data directory (mode 0600). Every node of a cluster must share them: configure them there,
 * or share the data directory. A configured value is hex or base64 and holds at least 32 bytes
 * (checked by src/config/index.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function decodeSecret(configured: string): Buffer {
  return Buffer.from(configured, /^[0-9a-f]+$/i.test(configured) ? 'hex' : 'base64');
}

export function loadSecret(fileName: string, configured: string | null, dataDir: string): Buffer {
  if (configured) return decodeSecret(configured);
  const file = path.join(dataDir, fileName);
  try {
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, crypto.randomBytes(32).toString('base64'), { mode: 0o600 });
  try {
    fs.linkSync(tmp, file); // the first writer wins when several nodes share the directory
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
}
