/**
 * docs/reference.md is the OpenAPI document rendered (`npm run docs:api`), complete, and the
 * repository's documentation stands alone: no link leaves it for the contract's folder.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { renderReference } from '../src/api/reference.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'schema/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { operationId: string; 'x-error-codes': string[] }>> };
const reference = fs.readFileSync(path.join(ROOT, 'docs/reference.md'), 'utf8');

test('docs/reference.md is up to date with schema/openapi.json (run `npm run docs:api`)', () => {
  assert.equal(reference, renderReference(doc), 'docs/reference.md is stale: run `npm run docs:api` and commit it');
});

test('it holds every operation, each with every error code the document lists', () => {
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const start = reference.indexOf(`\n### ${method.toUpperCase()} ${p}\n`);
      assert.ok(start !== -1, `${method.toUpperCase()} ${p} has a section`);
      const section = reference.slice(start, reference.indexOf('\n### ', start + 1) >>> 0);
      for (const c of op['x-error-codes']) assert.ok(section.includes(`\`${c}\``), `${method.toUpperCase()} ${p}: ${c}`);
      assert.ok(reference.includes(`(#${op.operationId.toLowerCase()})`), `${op.operationId} is in the index`);
    }
  }
});

test('README and docs/ link nothing outside the repository, and the README links the reference', () => {
  const files = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  for (const f of files) {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    assert.doesNotMatch(text, /\.\.\/shared\//, `${f} links ../shared/`);
    // Every relative link resolves inside the repository to a file that exists.
    for (const m of text.matchAll(/\]\((?!https?:|mailto:|#)([^)#\s]+)(#[^)\s]*)?\)/g)) {
      const target = path.resolve(path.dirname(path.join(ROOT, f)), m[1] as string);
      assert.ok(target.startsWith(`${ROOT}${path.sep}`), `${f}: ${m[1]} leaves the repository`);
      assert.ok(fs.existsSync(target), `${f}: ${m[1]} does not exist`);
    }
  }
  assert.match(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), /\]\(docs\/reference\.md\)/);
});
