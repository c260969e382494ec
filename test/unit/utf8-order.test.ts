/** The push device store's order of user ids is SQLite's BINARY order (UTF-8 bytes), without allocating. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { utf8Order } from '../../src/store/sqlite/push-devices.ts';

const bytes = (a: string, b: string): number => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

test('utf8Order agrees with the order of the UTF-8 bytes, astral characters and prefixes included', () => {
  const alphabet = ['a', 'b', 'z', 'A', '~', 'é', 'ß', '中', '\ue000', '\uffff', '😀', '𝄞', '\u0000', ':'];
  let seed = 7;
  const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const word = (): string => Array.from({ length: next() % 5 }, () => alphabet[next() % alphabet.length]).join('');
  for (let i = 0; i < 20_000; i += 1) {
    const a = word();
    const b = word();
    assert.equal(Math.sign(utf8Order(a, b)), bytes(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  assert.ok(utf8Order('\uffff', '😀') < 0, 'U+FFFF before U+1F600 (UTF-16 code units would say otherwise)');
  assert.deepEqual(['b', 'a😀', 'a\uffff', 'a'].sort(utf8Order), ['a', 'a\uffff', 'a😀', 'b']);
});
