import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

test('defaults: embedded node on 127.0.0.1:8080 under /api/v1', () => {
  const c = loadConfig({});
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.port, 8080);
  assert.equal(c.publicBaseUrl, 'http://127.0.0.1:8080/api/v1');
  assert.equal(c.idp.driver, 'embedded');
  assert.deepEqual(c.rates.client, { limit: 600, windowSeconds: 60 });
  assert.deepEqual(c.rates.send, { limit: 30, windowSeconds: 10 });
  assert.deepEqual(c.rates.lookup, { limit: 20, windowSeconds: 10 });
  assert.equal(c.bodyLimitBytes, 256 * 1024);
});

test('every wrong setting is reported at once, clearly', () => {
  assert.throws(
    () => loadConfig({ CHAT_PORT: 'eighty', CHAT_IDP: 'ldap', CHAT_RATE_SEND: '30 per 10', CHAT_PUBLIC_BASE_URL: 'ftp://x/api/v1', CHAT_LOG_LEVEL: 'loud' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 5, err.message);
      assert.match(err.message, /CHAT_PORT must be an integer/);
      assert.match(err.message, /CHAT_IDP must be "embedded" or "http"/);
      assert.match(err.message, /CHAT_RATE_SEND must look like/);
      assert.match(err.message, /CHAT_PUBLIC_BASE_URL must be an absolute http\(s\) URL/);
      assert.match(err.message, /CHAT_LOG_LEVEL must be one of/);
      return true;
    },
  );
});

test('the http identity driver needs its URL', () => {
  assert.throws(() => loadConfig({ CHAT_IDP: 'http' }), /CHAT_IDP_URL is required/);
  const c = loadConfig({ CHAT_IDP: 'http', CHAT_IDP_URL: 'http://idp.internal:8081/' });
  assert.deepEqual(c.idp, { driver: 'http', url: 'http://idp.internal:8081', timeoutMs: 2000, directoryKey: 'dev-directory-key' });
});

test('VAPID keys come in pairs; the public base URL must end with /api/v1', () => {
  assert.throws(() => loadConfig({ CHAT_VAPID_PUBLIC_KEY: 'abc' }), /must be set together/);
  assert.throws(() => loadConfig({ CHAT_PUBLIC_BASE_URL: 'https://chat.example.com/' }), /must end with \/api\/v1/);
  assert.equal(loadConfig({ CHAT_PUBLIC_BASE_URL: 'https://chat.example.com/api/v1' }).publicBaseUrl, 'https://chat.example.com/api/v1');
});

test('storage settings and the cursor secret are validated', () => {
  assert.deepEqual(loadConfig({}).store, { driver: 'sqlite', mode: 'exclusive', writer: 'thread', commitIntervalMs: 5 });
  assert.deepEqual(loadConfig({ CHAT_SQLITE_MODE: 'shared-file' }).store, { driver: 'sqlite', mode: 'shared-file', writer: 'thread', commitIntervalMs: 5 });
  assert.deepEqual(loadConfig({ CHAT_SQLITE_WRITER: 'inline' }).store, { driver: 'sqlite', mode: 'exclusive', writer: 'inline', commitIntervalMs: 5 });
  assert.deepEqual(loadConfig({ CHAT_SQLITE_COMMIT_INTERVAL_MS: '0' }).store, { driver: 'sqlite', mode: 'exclusive', writer: 'thread', commitIntervalMs: 0 });
  assert.throws(() => loadConfig({ CHAT_SQLITE_COMMIT_INTERVAL_MS: '101' }), /CHAT_SQLITE_COMMIT_INTERVAL_MS/);
  assert.throws(() => loadConfig({ CHAT_SQLITE_COMMIT_INTERVAL_MS: 'soon' }), /CHAT_SQLITE_COMMIT_INTERVAL_MS/);
  assert.throws(() => loadConfig({ CHAT_SQLITE_WRITER: 'worker' }), /CHAT_SQLITE_WRITER must be "thread" or "inline"/);
  assert.throws(() => loadConfig({ CHAT_STORE_DRIVER: 'postgres' }), /CHAT_STORE_DRIVER must be "sqlite" or "cassandra"/);
  assert.throws(() => loadConfig({ CHAT_SQLITE_MODE: 'both' }), /CHAT_SQLITE_MODE/);
  assert.throws(() => loadConfig({ CHAT_CURSOR_SECRET: 'abcd' }), /at least 32 bytes/);
  assert.equal(loadConfig({ CHAT_CURSOR_SECRET: 'ab'.repeat(32) }).cursorSecret, 'ab'.repeat(32));
});

test('the retention interval: default 1 h, 0 turns the job off, otherwise at least 1 s', () => {
  assert.equal(loadConfig({}).retentionIntervalMs, 3_600_000);
  assert.equal(loadConfig({ CHAT_RETENTION_INTERVAL_MS: '0' }).retentionIntervalMs, 0);
  assert.equal(loadConfig({ CHAT_RETENTION_INTERVAL_MS: '60000' }).retentionIntervalMs, 60_000);
  assert.throws(() => loadConfig({ CHAT_RETENTION_INTERVAL_MS: '500' }), /CHAT_RETENTION_INTERVAL_MS must be 0 \(off\) or at least 1000/);
  assert.throws(() => loadConfig({ CHAT_RETENTION_INTERVAL_MS: 'hourly' }), /CHAT_RETENTION_INTERVAL_MS must be an integer/);
  assert.throws(() => loadConfig({ CHAT_RETENTION_INTERVAL_MS: String(8 * 86_400_000) }), /CHAT_RETENTION_INTERVAL_MS must be an integer/);
});

test('cassandra storage: contact points required, keyspace a CQL identifier', () => {
  const store = loadConfig({ CHAT_STORE_DRIVER: 'cassandra', CHAT_CASSANDRA_CONTACT_POINTS: 'db1:9042, db2', CHAT_CASSANDRA_LOCAL_DC: 'dc1' }).store;
  assert.deepEqual(store, { driver: 'cassandra', contactPoints: ['db1:9042', 'db2'], localDataCenter: 'dc1', keyspace: 'chat', replicationFactor: 3, username: null, password: null });
  assert.throws(() => loadConfig({ CHAT_STORE_DRIVER: 'cassandra' }), /CHAT_CASSANDRA_CONTACT_POINTS must list/);
  assert.throws(() => loadConfig({ CHAT_STORE_DRIVER: 'cassandra', CHAT_CASSANDRA_CONTACT_POINTS: 'db1', CHAT_CASSANDRA_KEYSPACE: 'Bad-Name' }), /CHAT_CASSANDRA_KEYSPACE/);
});

test('the cluster: CHAT_CLUSTER=redis needs a Redis URL, shared secrets and a shared store; drivers follow it', () => {
  assert.deepEqual(loadConfig({}).cluster, { mode: 'none' });
  const shared = { CHAT_CURSOR_SECRET: 'ab'.repeat(32), CHAT_REALTIME_SECRET: 'cd'.repeat(32), CHAT_CLUSTER_SECRET: 'a-long-cluster-secret', CHAT_SQLITE_MODE: 'shared-file' };
  const c = loadConfig({ ...shared, CHAT_CLUSTER: 'redis', CHAT_REDIS_URL: 'redis://127.0.0.1:6390', CHAT_NODE_ID: 'n1', CHAT_INTERNAL_PORT: '9100' });
  assert.equal(c.cluster.mode, 'redis');
  if (c.cluster.mode === 'redis') {
    assert.equal(c.cluster.nodeId, 'n1');
    assert.equal(c.cluster.internalPort, 9100);
    assert.equal(c.cluster.heartbeatMs, 1000);
    assert.equal(c.cluster.nodeTtlMs, 5000);
  }
  assert.deepEqual(c.rateLimit, { driver: 'redis', lease: { maxTokens: 8, ms: 1000 } });
  const exact = loadConfig({ ...shared, CHAT_CLUSTER: 'redis', CHAT_REDIS_URL: 'redis://x', CHAT_RATE_LIMIT_LEASE: '1', CHAT_RATE_LIMIT_LEASE_MS: '250' });
  assert.deepEqual(exact.rateLimit, { driver: 'redis', lease: { maxTokens: 1, ms: 250 } });
  assert.throws(() => loadConfig({ ...shared, CHAT_CLUSTER: 'redis', CHAT_REDIS_URL: 'redis://x', CHAT_RATE_LIMIT_LEASE: '0' }), /CHAT_RATE_LIMIT_LEASE/);
  assert.equal(c.presence.driver, 'redis');
  assert.throws(() => loadConfig({ ...shared, CHAT_CLUSTER: 'redis' }), /CHAT_REDIS_URL must be a redis:\/\//);
  assert.throws(() => loadConfig({ ...shared, CHAT_CLUSTER: 'redis', CHAT_REDIS_URL: 'redis://x', CHAT_CLUSTER_SECRET: '' }), /CHAT_CLUSTER_SECRET must be set/);
  assert.throws(() => loadConfig({ ...shared, CHAT_CLUSTER: 'redis', CHAT_REDIS_URL: 'redis://x', CHAT_REALTIME_SECRET: '' }), /CHAT_REALTIME_SECRET must be set/);
  assert.throws(() => loadConfig({ ...shared, CHAT_CLUSTER: 'redis', CHAT_REDIS_URL: 'redis://x', CHAT_SQLITE_MODE: 'exclusive' }), /needs CHAT_SQLITE_MODE=shared-file/);
  assert.throws(() => loadConfig({ ...shared, CHAT_CLUSTER: 'redis', CHAT_REDIS_URL: 'redis://x', CHAT_HEARTBEAT_MS: '3000', CHAT_NODE_TTL_MS: '4000' }), /at least twice/);
  assert.throws(() => loadConfig({ CHAT_CLUSTER: 'zookeeper' }), /CHAT_CLUSTER must be "none" or "redis"/);
  assert.throws(() => loadConfig({ CHAT_RATE_LIMIT_DRIVER: 'redis' }), /needs CHAT_CLUSTER=redis/);
});

test('a Redis Cluster: CHAT_REDIS_CLUSTER_NODES instead of CHAT_REDIS_URL, with job shards and pub/sub mode; a prefix without braces', () => {
  const shared = { CHAT_CURSOR_SECRET: 'ab'.repeat(32), CHAT_REALTIME_SECRET: 'cd'.repeat(32), CHAT_CLUSTER_SECRET: 'a-long-cluster-secret', CHAT_SQLITE_MODE: 'shared-file', CHAT_CLUSTER: 'redis' };
  const c = loadConfig({ ...shared, CHAT_REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis://:pw@10.0.0.2:7001,[::1]:7002', CHAT_REDIS_JOB_SHARDS: '16', CHAT_REDIS_PUBSUB: 'classic' });
  assert.ok(c.cluster.mode === 'redis');
  assert.deepEqual(c.cluster.redisClusterNodes, ['10.0.0.1:7000', 'redis://:pw@10.0.0.2:7001', '[::1]:7002']);
  assert.equal(c.cluster.redisUrl, '');
  assert.equal(c.cluster.redisJobShards, 16);
  assert.equal(c.cluster.redisPubSub, 'classic');
  const single = loadConfig({ ...shared, CHAT_REDIS_URL: 'redis://127.0.0.1:6390' });
  assert.ok(single.cluster.mode === 'redis');
  assert.deepEqual([single.cluster.redisClusterNodes, single.cluster.redisJobShards, single.cluster.redisPubSub], [[], null, null], 'the drivers choose');
  assert.throws(() => loadConfig({ ...shared, CHAT_REDIS_URL: 'redis://x:1', CHAT_REDIS_CLUSTER_NODES: 'a:1' }), /not both/);
  assert.throws(() => loadConfig({ ...shared, CHAT_REDIS_CLUSTER_NODES: 'a:1,b' }), /CHAT_REDIS_CLUSTER_NODES must be a comma-separated list .*got "b"/);
  assert.throws(() => loadConfig({ ...shared, CHAT_REDIS_CLUSTER_NODES: 'http://a:1' }), /CHAT_REDIS_CLUSTER_NODES/);
  assert.throws(() => loadConfig({ ...shared, CHAT_REDIS_CLUSTER_NODES: 'a:1', CHAT_REDIS_JOB_SHARDS: '0' }), /CHAT_REDIS_JOB_SHARDS must be an integer from 1 to 256/);
  assert.throws(() => loadConfig({ ...shared, CHAT_REDIS_CLUSTER_NODES: 'a:1', CHAT_REDIS_PUBSUB: 'both' }), /CHAT_REDIS_PUBSUB must be "sharded" or "classic"/);
  assert.throws(() => loadConfig({ ...shared, CHAT_REDIS_CLUSTER_NODES: 'a:1', CHAT_REDIS_KEY_PREFIX: 'chat:{x}:' }), /CHAT_REDIS_KEY_PREFIX must not contain/);
});

test('FCM and APNs: off unless their key files are set; APNs needs key id, team id and topic', () => {
  assert.equal(loadConfig({}).webPush.fcm, null);
  assert.equal(loadConfig({}).webPush.apns, null);
  const file = new URL(import.meta.url).pathname; // any readable file stands in for a key file
  assert.deepEqual(loadConfig({ CHAT_FCM_SERVICE_ACCOUNT_FILE: file }).webPush.fcm, { serviceAccountFile: file, projectId: null, endpoint: null, tokenUri: null });
  assert.throws(() => loadConfig({ CHAT_FCM_SERVICE_ACCOUNT_FILE: '/nonexistent/key.json' }), /CHAT_FCM_SERVICE_ACCOUNT_FILE must name a readable file/);
  const apns = loadConfig({ CHAT_APNS_KEY_FILE: file, CHAT_APNS_KEY_ID: 'ABCDE12345', CHAT_APNS_TEAM_ID: 'TEAM123456', CHAT_APNS_TOPIC: 'com.example.chat', CHAT_APNS_ENV: 'sandbox' }).webPush.apns;
  assert.deepEqual(apns, { keyFile: file, keyId: 'ABCDE12345', teamId: 'TEAM123456', topic: 'com.example.chat', origin: 'sandbox' });
  assert.throws(() => loadConfig({ CHAT_APNS_KEY_FILE: file, CHAT_APNS_KEY_ID: 'short', CHAT_APNS_TEAM_ID: 'TEAM123456', CHAT_APNS_TOPIC: 't' }), /CHAT_APNS_KEY_ID/);
  assert.throws(() => loadConfig({ CHAT_APNS_TOPIC: 'com.example.chat' }), /CHAT_APNS_KEY_FILE is not/);
  assert.throws(() => loadConfig({ CHAT_APNS_KEY_FILE: file, CHAT_APNS_KEY_ID: 'ABCDE12345', CHAT_APNS_TEAM_ID: 'TEAM123456', CHAT_APNS_TOPIC: 't', CHAT_APNS_ENV: 'http://x' }), /CHAT_APNS_ENV/);
});
