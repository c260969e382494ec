/**
 * No object literal in the service's code starts with a spread and then adds members
 * (`{ ...a, k: v }`, `{ ...a, ...b }`), inside a function.
 *
 * Why: on Node 20 (V8 11.3) such a literal is built by cloning `a` and then adding properties to
 * the clone, and the result is not collected young: measured in a loop (2026-11-23), ~22% of
 * everything allocated was promoted to the old generation, scavenges took 2.8 ms instead of
 * 0.1 ms, and the loop ran 9x slower than with `{ k: v, ...a }` or listed fields. In the node this
 * was most of the send and read paths' garbage being promoted (~20 MB/s at 3,200 requests/s),
 * with a Mark-Compact every ~3 s: the tail of the messages bench (docs/benchmarks.md, fifth session).
 *
 * Write instead: `{ k: v, ...a }` when `a` cannot hold `k` (TypeScript reports a required `k` as
 * TS2783), the fields listed, a destructuring that takes the overridden keys out
 * (`const { k: _old, ...rest } = a; ({ k: v, ...rest })`), or `Object.assign({}, a, { k: v })`
 * for internal objects off the hot paths. A literal starting with a spread and nothing else
 * (`{ ...a }`) is fine. Literals at module level run once and are not checked; neither are the
 * store contract suites under src/store/contract (tests).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return p.endsWith(path.join('store', 'contract')) ? [] : sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

function inFunction(node: ts.Node): boolean {
  for (let p = node.parent; p; p = p.parent) if (ts.isFunctionLike(p)) return true;
  return false;
}

/** The literals of `src` this file forbids. */
function spreadFirst(src: ts.SourceFile): ts.ObjectLiteralExpression[] {
  const out: ts.ObjectLiteralExpression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && node.properties.length > 1 && ts.isSpreadAssignment(node.properties[0]!) && inFunction(node)) out.push(node);
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

test('no object literal inside a function starts with a spread followed by more members', () => {
  const found: string[] = [];
  for (const file of sources(ROOT)) {
    const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const node of spreadFirst(src)) {
      const { line } = src.getLineAndCharacterOfPosition(node.getStart(src));
      found.push(`${path.relative(ROOT, file)}:${line + 1}: ${node.getText(src).replace(/\s+/g, ' ').slice(0, 100)}`);
    }
  }
  assert.deepEqual(found, [], `object literals starting with a spread (see this file's comment):\n${found.join('\n')}`);
});

test('the scan finds the pattern it forbids', () => {
  const code = 'const top = { ...a, k: 1 };\nfunction f(a: object) { return [{ ...a, k: 1 }, { k: 1, ...a }, { ...a }, { ...a, ...a }]; }';
  const src = ts.createSourceFile('x.ts', code, ts.ScriptTarget.Latest, true);
  assert.deepEqual(spreadFirst(src).map((n) => n.getText(src)), ['{ ...a, k: 1 }', '{ ...a, ...a }']);
});
