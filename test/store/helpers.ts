/** Shared by the SQLite store tests: temp directories removed after the file's tests. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

/** A fresh directory under one temp root per test file; the root is removed after the file. */
export function tempDirs(prefix: string): () => string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  let n = 0;
  return () => {
    n += 1;
    const dir = path.join(root, String(n));
    fs.mkdirSync(dir);
    return dir;
  };
}
