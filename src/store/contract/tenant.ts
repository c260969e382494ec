/** Contract: profiles, idempotency records, settings, role overrides, push devices. */
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { describe } from 'node:test';
import { storeTest, type MakeStore } from './fixtures.ts';

export function tenantContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('profiles', () => {
    test('idp answers overwrite; hints only fill what is unknown', async (kit) => {
      const t = kit.ctx.tenant_id;
      await kit.store.profiles.upsert(t, [{ user_id: 'ann', display_name: null, avatar_url: null }], 'hint', kit.tick());
      await kit.store.profiles.upsert(t, [{ user_id: 'ann', display_name: 'Ann (hint)', avatar_url: null }], 'hint', kit.tick());
      await kit.store.profiles.upsert(t, [{ user_id: 'ann', display_name: 'Other hint', avatar_url: 'https://x' }], 'hint', kit.tick());
      let [ann] = await kit.store.profiles.get(t, ['ann']);
      assert.deepEqual([ann?.display_name, ann?.avatar_url], ['Ann (hint)', 'https://x']);
      const at = kit.tick();
      await kit.store.profiles.upsert(t, [{ user_id: 'ann', display_name: 'Ann Archer', avatar_url: null }], 'idp', at);
      [ann] = await kit.store.profiles.get(t, ['ann']);
      assert.deepEqual(ann, { tenant_id: t, user_id: 'ann', display_name: 'Ann Archer', avatar_url: null, updated_at: at });
      assert.deepEqual(await kit.store.profiles.get(`${t}-other`, ['ann']), []);
    });

    test('prefix search over user id and display name, case-insensitive, bounded', async (kit) => {
      const t = kit.ctx.tenant_id;
      await kit.store.profiles.upsert(t, [
        { user_id: 'alice', display_name: 'Zoe Alpha', avatar_url: null },
        { user_id: 'u-2', display_name: 'Álvaro Ortiz', avatar_url: null },
        { user_id: 'u-3', display_name: 'ALBERT', avatar_url: null },
        { user_id: 'bob', display_name: 'Bob', avatar_url: null },
        { user_id: 'al%_x', display_name: null, avatar_url: null },
      ], 'idp');
      await kit.store.profiles.upsert(`${t}-other`, [{ user_id: 'alfred', display_name: null, avatar_url: null }], 'idp');
      const ids = async (q: string, limit = 10): Promise<string[]> => (await kit.store.profiles.search(t, q, limit)).map((p) => p.user_id);
      assert.deepEqual(await ids('al'), ['al%_x', 'alice', 'u-3']);
      assert.deepEqual(await ids('AL'), ['al%_x', 'alice', 'u-3']);
      assert.deepEqual(await ids('ál'), ['u-2']);
      assert.deepEqual(await ids('zoe a'), ['alice']);
      assert.deepEqual(await ids('al%'), ['al%_x'], 'wildcards are plain characters');
      assert.deepEqual(await ids('u-'), ['u-2', 'u-3']);
      assert.deepEqual(await ids('nobody'), []);
      assert.equal((await ids('al', 2)).length, 2);
      await assert.rejects(kit.store.profiles.search(t, '', 10), RangeError);
    });
  });

  describe('idempotency', () => {
    const key = () => ({ principal_key: `user:${randomUUID()}`, idempotency_key: randomUUID(), method_route: 'POST /x' });
    // Two processes, both running; `b` restarted as `c` (b is dead from then on).
    const A = { owner: 'proc-a', live: ['proc-a', 'proc-b'] };
    const B = { owner: 'proc-b', live: ['proc-a', 'proc-b'] };
    const C = { owner: 'proc-c', live: ['proc-a', 'proc-c'] };

    test('claim, replay after complete, and one winner among concurrent claims', async (kit) => {
      const k = key();
      const claims = await Promise.all(Array.from({ length: 10 }, () => kit.store.idempotency.claim(k, 'h1', A, kit.at(0))));
      assert.deepEqual(claims.filter((c) => c.claimed), [{ claimed: true, created_at: kit.at(0) }]);
      const pending = claims.find((c) => !c.claimed);
      assert.ok(pending && !pending.claimed);
      assert.deepEqual([pending.record.response_status, pending.record.owner], [null, 'proc-a']);
      assert.equal(await kit.store.idempotency.complete(k, 'proc-a', 201, '{"id":1}'), true);
      assert.equal(await kit.store.idempotency.complete(k, 'proc-a', 500, null), false, 'a finished record is not overwritten');
      const replay = await kit.store.idempotency.claim(k, 'h2', B, kit.at(3600));
      assert.ok(!replay.claimed);
      assert.deepEqual(
        [replay.record.response_status, replay.record.response_body, replay.record.request_hash, replay.record.created_at],
        [201, '{"id":1}', 'h1', kit.at(0)],
      );
      assert.ok((await kit.store.idempotency.claim({ ...k, method_route: 'POST /y' }, 'h1', A, kit.at(1))).claimed, 'another route is another key');
      assert.ok((await kit.store.idempotency.claim({ ...k, principal_key: 'user:other' }, 'h1', A, kit.at(1))).claimed, 'keys never cross principals');
    });

    test('records expire after 24 h, stuck claims after a minute; release frees a claim', async (kit) => {
      const done = key();
      await kit.store.idempotency.claim(done, 'h', A, kit.at(0));
      await kit.store.idempotency.complete(done, 'proc-a', 200, 'ok');
      assert.ok(await kit.store.idempotency.get(done, kit.at(24 * 3600 - 1)));
      assert.equal(await kit.store.idempotency.get(done, kit.at(24 * 3600)), null);
      assert.deepEqual(await kit.store.idempotency.claim(done, 'h', A, kit.at(24 * 3600)), { claimed: true, created_at: kit.at(24 * 3600) }, 'a new record');

      const stuck = key();
      await kit.store.idempotency.claim(stuck, 'h', A, kit.at(0));
      assert.ok(!(await kit.store.idempotency.claim(stuck, 'h', B, kit.at(59))).claimed, 'a live owner holds it for a minute');
      assert.deepEqual(await kit.store.idempotency.claim(stuck, 'h', B, kit.at(61)), { claimed: true, created_at: kit.at(0) });

      const released = key();
      await kit.store.idempotency.claim(released, 'h', A, kit.at(0));
      await kit.store.idempotency.release(released, 'proc-b');
      assert.ok(!(await kit.store.idempotency.claim(released, 'h', A, kit.at(1))).claimed, 'only its owner releases a claim');
      await kit.store.idempotency.release(released, 'proc-a');
      assert.deepEqual(await kit.store.idempotency.claim(released, 'h', A, kit.at(1)), { claimed: true, created_at: kit.at(0) }, 'a released claim keeps its time');
      await kit.store.idempotency.release(released, 'proc-a');
      const reused = await kit.store.idempotency.claim(released, 'h2', B, kit.at(2));
      assert.ok(!reused.claimed && reused.record.request_hash === 'h', 'another body is still a reused key');
    });

    test('a pending claim of a dead process is taken over at once, keeping its creation time', async (kit) => {
      const k = key();
      await kit.store.idempotency.claim(k, 'h', B, kit.at(0));
      const inProgress = await kit.store.idempotency.claim(k, 'h', A, kit.at(1));
      assert.ok(!inProgress.claimed && inProgress.record.owner === 'proc-b', 'while b runs, its claim is in progress');
      // b died and restarted as c: its claim is c's to take, once, with the original time.
      const takes = await Promise.all(Array.from({ length: 5 }, () => kit.store.idempotency.claim(k, 'h', C, kit.at(2))));
      assert.deepEqual(takes.filter((t) => t.claimed), [{ claimed: true, created_at: kit.at(0) }]);
      const now = await kit.store.idempotency.claim(k, 'h', C, kit.at(3));
      assert.ok(!now.claimed && now.record.owner === 'proc-c' && now.record.created_at === kit.at(0));
      assert.equal(await kit.store.idempotency.complete(k, 'proc-b', 201, '{"old":1}'), false, 'the old owner cannot finish it any more');
      await kit.store.idempotency.release(k, 'proc-b');
      assert.equal(await kit.store.idempotency.complete(k, 'proc-c', 201, '{"new":1}'), true);
      const replay = await kit.store.idempotency.claim(k, 'h', A, kit.at(4));
      assert.ok(!replay.claimed);
      assert.deepEqual([replay.record.response_status, replay.record.response_body, replay.record.created_at], [201, '{"new":1}', kit.at(0)]);

      const other = key();
      await kit.store.idempotency.claim(other, 'h1', B, kit.at(0));
      const reused = await kit.store.idempotency.claim(other, 'h2', C, kit.at(1));
      assert.ok(!reused.claimed && reused.record.request_hash === 'h1', 'another body never takes a claim over (the caller answers idempotency_key_reused)');
    });

    test('sweep deletes expired records only', async (kit) => {
      // sweep() is store-wide (records belong to principals, not tenants), and a shared backend
      // (one Cassandra keyspace for the whole suite) holds the other tests' records, all made at
      // the start of the suite's clock. So this test's records live days away from everyone
      // else's, at a random day: the count it asserts is then its own.
      const base = 86_400 * (1000 + randomInt(100_000));
      const old = key();
      const fresh = key();
      await kit.store.idempotency.claim(old, 'h', A, kit.at(base));
      await kit.store.idempotency.claim(fresh, 'h', A, kit.at(base + 20 * 3600));
      assert.equal(await kit.store.idempotency.sweep(kit.at(base + 25 * 3600)), 1);
      assert.equal(await kit.store.idempotency.get(old, kit.at(base)), null);
      assert.ok(await kit.store.idempotency.get(fresh, kit.at(base + 20 * 3600)));
    });
  });

  describe('settings and role overrides', () => {
    test('retention defaults to null, updates, and lists tenants with a retention', async (kit) => {
      const t = kit.ctx.tenant_id;
      assert.deepEqual(await kit.store.settings.get(t), { tenant_id: t, message_retention_days: null, updated_at: null });
      const at = kit.tick();
      assert.deepEqual(await kit.store.settings.update(t, { message_retention_days: 30 }, at), { tenant_id: t, message_retention_days: 30, updated_at: at });
      assert.equal((await kit.store.settings.update(t, {}))?.message_retention_days, 30);
      assert.ok((await kit.store.settings.listRetention()).some((r) => r.tenant_id === t && r.message_retention_days === 30));
      await kit.store.settings.update(t, { message_retention_days: null });
      assert.ok(!(await kit.store.settings.listRetention()).some((r) => r.tenant_id === t));
      await assert.rejects(kit.store.settings.update(t, { message_retention_days: 0 }), RangeError);
      await assert.rejects(kit.store.settings.update(t, { message_retention_days: 1.5 }), RangeError);
    });

    test('overrides per mapping: tenant-wide (null) and per application are separate', async (kit) => {
      const t = kit.ctx.tenant_id;
      const set = await kit.store.roleOverrides.set(t, null, 'role-b', ['messages.send', 'conversations.read', 'messages.send'], kit.tick());
      assert.deepEqual(set.capabilities, ['conversations.read', 'messages.send']);
      assert.equal(set.application_id, null);
      await kit.store.roleOverrides.set(t, null, 'role-a', []);
      await kit.store.roleOverrides.set(t, 'app-1', 'role-b', ['messages.read']);
      assert.deepEqual((await kit.store.roleOverrides.list(t, null)).map((o) => [o.role_id, o.capabilities]), [['role-a', []], ['role-b', ['conversations.read', 'messages.send']]]);
      assert.deepEqual((await kit.store.roleOverrides.list(t, 'app-1')).map((o) => [o.application_id, o.capabilities]), [['app-1', ['messages.read']]]);
      await kit.store.roleOverrides.set(t, null, 'role-b', ['messages.read']);
      assert.deepEqual((await kit.store.roleOverrides.list(t, null))[1]?.capabilities, ['messages.read']);
      assert.equal(await kit.store.roleOverrides.delete(t, null, 'role-b'), true);
      assert.equal(await kit.store.roleOverrides.delete(t, null, 'role-b'), false);
      assert.equal((await kit.store.roleOverrides.list(t, 'app-1')).length, 1);
    });
  });

  describe('push devices', () => {
    test('upsert is idempotent, moves a shared device, and deletes are scoped', async (kit) => {
      const t = kit.ctx.tenant_id;
      const web = { tenant_id: t, user_id: 'ann', platform: 'web' as const, token_or_endpoint: 'https://push.example/abc', p256dh: 'k', auth: 'a' };
      const first = await kit.store.pushDevices.upsert(web, kit.at(1));
      const again = await kit.store.pushDevices.upsert({ ...web, auth: 'a2' }, kit.at(2));
      assert.deepEqual([again.created_at, again.updated_at, again.auth], [first.created_at, kit.at(2), 'a2']);
      await kit.store.pushDevices.upsert({ tenant_id: t, user_id: 'ann', platform: 'fcm', token_or_endpoint: 'fcm-token' }, kit.at(3));
      await kit.store.pushDevices.upsert({ tenant_id: t, user_id: 'bob', platform: 'apns', token_or_endpoint: 'apns-token' }, kit.at(4));
      const list = await kit.store.pushDevices.listForUsers(t, ['ann', 'bob', 'cid']);
      assert.deepEqual(list.map((d) => [d.user_id, d.platform, d.token_or_endpoint]), [
        ['ann', 'web', 'https://push.example/abc'], ['ann', 'fcm', 'fcm-token'], ['bob', 'apns', 'apns-token'],
      ]);
      assert.equal(list[1]?.p256dh, null);

      await kit.store.pushDevices.upsert({ ...web, user_id: 'bob' }, kit.at(5));
      assert.deepEqual((await kit.store.pushDevices.listForUsers(t, ['ann'])).map((d) => d.token_or_endpoint), ['fcm-token']);
      assert.equal(await kit.store.pushDevices.delete(t, 'ann', 'apns-token'), false, "another user's device stays");
      assert.equal(await kit.store.pushDevices.delete(t, 'bob', 'apns-token'), true);

      await kit.store.pushDevices.upsert({ ...web, tenant_id: `${t}-2` }, kit.at(6));
      assert.equal(await kit.store.pushDevices.deleteEndpoint(web.token_or_endpoint), 2);
      assert.deepEqual((await kit.store.pushDevices.listForUsers(t, ['bob'])).length, 0);
    });
  });
}
