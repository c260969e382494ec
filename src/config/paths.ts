/**
 * The project root, found by walking up to package.json, so paths to shipped files (the demo
 * fixture, the OpenAPI file) hold both when running from src/ through tsx and from the bundle in
 * dist/ that `npm start` runs.
 */
import fs from 'node:fs';
import path from 'node:path';

function findRoot(from: string): string {
  let dir = from;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
}

export const PROJECT_ROOT = findRoot(import.meta.dirname);
