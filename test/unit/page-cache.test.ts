/** The history page cache: revision and age validity, per-viewer pages, the memory bound. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PageCache } from '../../src/api/page-cache.ts';

const page = (text: string): Buffer => Buffer.from(text);

test('a page is served only at the revision it was built at, and only while young enough', () => {
  let now = 1_000;
  const cache = new PageCache({ maxAgeMs: 5_000, now: () => now });
  cache.set('c1|50|', 7, '', page('p7'), false);
  assert.equal(cache.get('c1|50|', 7, 'anyone')?.toString(), 'p7', 'a page without reactions is the same for every viewer');
  assert.equal(cache.get('c1|50|', 8, ''), undefined, 'a newer revision: stale, never served');
  assert.equal(cache.get('c1|50|', 7, ''), undefined, 'and the stale entry is gone');
  cache.set('c1|50|', 9, '', page('p9'), false);
  now += 5_001;
  assert.equal(cache.get('c1|50|', 9, ''), undefined, 'older than maxAgeMs: not served');
  assert.deepEqual({ hits: cache.stats.hits, entries: cache.snapshot().entries, bytes: cache.snapshot().bytes }, { hits: 1, entries: 0, bytes: 0 });
});

test('a page with reactions is kept per viewer', () => {
  const cache = new PageCache();
  cache.set('c2|50|', 1, 'ann', page('for ann'), true);
  assert.equal(cache.get('c2|50|', 1, 'ann')?.toString(), 'for ann');
  assert.equal(cache.get('c2|50|', 1, 'bob'), undefined, 'another viewer builds their own');
  cache.set('c2|50|', 1, 'bob', page('for bob'), true);
  assert.equal(cache.get('c2|50|', 1, 'bob')?.toString(), 'for bob');
  assert.equal(cache.get('c2|50|', 1, 'ann')?.toString(), 'for ann');
});

test('memory stays under maxBytes: the oldest entries go first; a page over a sixteenth is not kept', () => {
  const cache = new PageCache({ maxBytes: 16_000 });
  for (let i = 0; i < 40; i += 1) cache.set(`c${i}|50|`, 1, '', Buffer.alloc(900, 1), false);
  const { bytes, entries } = cache.snapshot();
  assert.ok(bytes <= 16_000, `${bytes} bytes held`);
  assert.ok(entries < 40 && entries > 10, `${entries} entries held`);
  assert.equal(cache.get('c0|50|', 1, ''), undefined, 'the oldest went first');
  assert.ok(cache.get('c39|50|', 1, '') !== undefined, 'the newest stays');
  cache.set('big|50|', 1, '', Buffer.alloc(1_001), false);
  assert.equal(cache.get('big|50|', 1, ''), undefined);
});
