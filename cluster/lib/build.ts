/**
 * `dist/` for the `dist` runtime: built with `npm run build` when missing or older than any file
 * under src/, so a cluster never runs a stale bundle after a pull or an edit.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const NODE_SCRIPT = { dist: 'dist/main.mjs', tsx: 'src/main.ts' } as const;
export const IDP_SCRIPT = { dist: 'dist/idp/main.mjs', tsx: 'src/idp/main.ts' } as const;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

export function needsBuild(root: string): boolean {
  const outputs = [NODE_SCRIPT.dist, IDP_SCRIPT.dist].map((f) => path.join(root, f));
  if (!outputs.every((f) => fs.existsSync(f))) return true;
  const built = Math.min(...outputs.map((f) => fs.statSync(f).mtimeMs));
  return newestMtime(path.join(root, 'src')) > built;
}

export function ensureBuilt(root: string, log: (line: string) => void): void {
  if (!needsBuild(root)) return;
  log('building dist/ (npm run build)');
  // stdout of npm goes to our stderr: the launcher's stdout is kept for the URLs it prints.
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', process.stderr, process.stderr] });
}

/** `node <script>` for the runtime: the bundle, or the sources through tsx (no build needed). */
export function nodeArgs(runtime: 'dist' | 'tsx', script: string): string[] {
  return runtime === 'dist' ? ['--enable-source-maps', script] : ['--import', 'tsx', script];
}
