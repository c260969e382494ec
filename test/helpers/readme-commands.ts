/**
 * The token commands of the README ("Getting tokens from the development IdP") and the examples'
 * setup of docs/api.md, as written, run by bash against a given origin in place of
 * `http://127.0.0.1:8080`: they must work unchanged against a single node and against the
 * cluster's balancer. Needs curl and jq (as the README does).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const DOC_ORIGIN = 'http://127.0.0.1:8080';

/** The ```sh blocks of `file` between `heading` and the next heading of the same or a higher level. */
export function shellBlocks(file: string, heading: string): string[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const level = (/^#+/.exec(heading)?.[0] ?? '##').length;
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`${file} has no "${heading}"`);
  const blocks: string[] = [];
  let block: string[] | null = null;
  for (const line of lines.slice(start + 1)) {
    if (block !== null) {
      if (line.startsWith('```')) {
        blocks.push(block.join('\n'));
        block = null;
      } else block.push(line);
      continue;
    }
    if (line === '```sh') block = [];
    else if (/^#+ /.test(line) && (/^#+/.exec(line)?.[0].length ?? 9) <= level) break;
  }
  return blocks;
}

/** The README's token commands, then the docs/api.md setup, for one origin. */
export function documentedTokenScript(origin: string): string {
  const readme = shellBlocks('README.md', '### Getting tokens from the development IdP');
  const api = shellBlocks('docs/api.md', '### Examples: setup');
  if (readme.length < 2 || api.length < 1) throw new Error('the documented token commands moved: update test/helpers/readme-commands.ts');
  const script = [
    'set -euo pipefail',
    ...readme,
    'echo; echo "--- docs/api.md setup"',
    ...api,
    'for t in "$ALICE" "$BOB" "$CAROL" "$MACHINE"; do [ -n "$t" ] && [ "$t" != null ] || { echo "empty token" >&2; exit 1; }; done',
    'curl -s -H "Authorization: Bearer $BOB" $BASE/me',
  ].join('\n');
  return script.split(DOC_ORIGIN).join(origin);
}

export async function runBash(script: string): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)('bash', ['-c', script], { timeout: 60_000, maxBuffer: 1 << 20 });
}

/** What the documented commands print, checked: bob's capabilities, a machine token, bob's /me. */
export function assertDocumentedOutput(stdout: string): void {
  assert.match(stdout, /"principal_type":"user"/, stdout);
  assert.match(stdout, /"application_id":"support"/, stdout);
  assert.match(stdout, /"access_token":"ey/, stdout);
  assert.match(stdout, /"token_type":"Bearer"/i, stdout);
  assert.match(stdout, /"user_id":"bob","display_name":"Bob Baker"/, stdout);
}
