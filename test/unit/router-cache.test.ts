/** The router's match cache holds short paths only, so long paths clients invent cannot fill memory. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROUTES } from '../../src/api/routes/index.ts';
import { Router } from '../../src/http/router.ts';

test('paths over 1 kB are matched but not cached; ordinary paths are', () => {
  const router = new Router(ROUTES);
  for (let i = 0; i < 50; i++) {
    const long = `/tenants/t${i}${'x'.repeat(2000)}/me/capabilities`;
    assert.equal(router.match('GET', long).kind, 'found', 'still matched');
  }
  assert.equal(router.cachedPaths, 0, 'long paths take no cache entry');
  router.match('GET', '/tenants/acme/me/capabilities');
  router.match('GET', '/tenants/acme/me/capabilities');
  assert.equal(router.cachedPaths, 1);
});
