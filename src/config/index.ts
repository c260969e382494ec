/**
 * Configuration: every setting comes from the environment, is validated here once, and the
 * process refuses to start with one clear line per problem (see README's configuration table).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './paths.ts';
import { decodeSecret } from './secrets.ts';
import { envReader, type Env } from './env-reader.ts';
import { clusterSettings, type ClusterConfig } from './cluster.ts';
import { pushPlatformSettings, type ApnsSettings, type FcmSettings } from './push-platforms.ts';

export type { ClusterConfig } from './cluster.ts';
export type { ApnsSettings, FcmSettings } from './push-platforms.ts';

export interface RateRule {
  limit: number;
  windowSeconds: number;
}

export type IdpConfig =
  | { driver: 'embedded'; fixturePath: string; devLogin: boolean }
  | { driver: 'http'; url: string; timeoutMs: number; directoryKey: string };

/** `lease`: hits of a busy key counted at once and handed out by the node (src/ratelimit/redis-rate-limiter.ts). */
export type RateLimitConfig = { driver: 'memory' } | { driver: 'redis'; lease: { maxTokens: number; ms: number } };

/** Storage: the embedded SQLite file in the data directory, or Cassandra / ScyllaDB. */
export type StoreSettings =
  | { driver: 'sqlite'; mode: 'exclusive' | 'shared-file'; writer: 'thread' | 'inline'; commitIntervalMs: number }
  | { driver: 'cassandra'; contactPoints: string[]; localDataCenter: string; keyspace: string; replicationFactor: number; username: string | null; password: string | null };


export interface WebPushConfig {
  enabled: boolean;
  vapidPublicKey: string | null;
  vapidPrivateKey: string | null;
  subject: string;
  /** Push jobs one node delivers at once. */
  concurrency: number;
  /** Socket timeout of one request to a push service. */
  timeoutMs: number;
  /**
   * A PEM CA certificate file trusted (besides the system CAs) for push service TLS: a private
   * push gateway, or the stand-in push service of the tests. null: system CAs only.
   */
  caFile: string | null;
  fcm: FcmSettings | null;
  apns: ApnsSettings | null;
}

/** Presence: in-process, or on Redis in a cluster (heartbeats then count on every node). */
export type PresenceSettings = { driver: 'memory' | 'redis'; windowMs: number };

export interface Config {
  host: string;
  port: number;
  /** Public base URL including `/api/v1`, as clients reach it (behind a load balancer too). */
  publicBaseUrl: string;
  /** False when derived from host and port (then fixed up with the real port after listen). */
  publicBaseUrlExplicit: boolean;
  dataDir: string;
  metricsHost: string;
  metricsPort: number;
  logLevel: string;
  idp: IdpConfig;
  identityCacheTtlMs: number;
  revocationPollMs: number;
  tokenCacheSize: number;
  bodyLimitBytes: number;
  rateLimit: RateLimitConfig;
  store: StoreSettings;
  /** Key for signing page cursors; null: generated once and kept in the data directory. */
  cursorSecret: string | null;
  rates: { client: RateRule; send: RateRule; lookup: RateRule };
  webPush: WebPushConfig;
  presence: PresenceSettings;
  shutdownGraceMs: number;
  /** How often the retention job purges expired messages; 0: never on this node. */
  retentionIntervalMs: number;
  /** The realtime stream (docs/realtime.md). */
  realtime: RealtimeConfig;
  /** The bus's resume window per channel (how far back Last-Event-ID can resume). */
  busWindow: { maxEventsPerChannel: number; maxAgeMs: number };
  cluster: ClusterConfig;
  /** The service's own web app (docs/web-app.md): its client at the IdP. */
  web: { clientId: string };
}

export interface RealtimeConfig {
  /** Key signing stream credentials; null: generated once and kept in the data directory. */
  secret: string | null;
  /** Credential lifetime (capped by the user token's own expiry). */
  tokenTtlMs: number;
  /** Interval of `: ka` comment lines on every stream. */
  keepAliveMs: number;
  /** Unsent bytes after which a slow stream is closed. */
  maxBufferedBytes: number;
  /** Streams one node holds at most (503 `service_unavailable` past it). */
  maxStreams: number;
  /** Streams one user holds on one node at most (429 `rate_limited` past it). */
  maxStreamsPerUser: number;
  /**
   * Live events for one stream are gathered and written together: 0, those of one turn of the
   * event loop; N, those of N ms (fewer writes per event on busy streams, N ms more latency).
   */
  flushMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export const API_PREFIX = '/api/v1';
export const TOKEN_AUDIENCE = 'chat-api';
export const DEFAULT_FIXTURE = path.join(PROJECT_ROOT, 'src/idp/demo-fixture.json');


export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const reader = envReader(env, problems);
  const { str, int, bool, url } = reader;
  const rate = (name: string, fallback: RateRule): RateRule => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const m = /^(\d+)\/(\d+)s$/.exec(raw);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
      problems.push(`${name} must look like "<count>/<seconds>s", for example "600/60s" (got "${raw}")`);
      return fallback;
    }
    return { limit: Number(m[1]), windowSeconds: Number(m[2]) };
  };

  const host = str('CHAT_HOST', '127.0.0.1');
  const port = int('CHAT_PORT', 8080, 0, 65535);
  const publicBaseUrl = url('CHAT_PUBLIC_BASE_URL', str('CHAT_PUBLIC_BASE_URL', `http://${host}:${port}${API_PREFIX}`));
  if (!publicBaseUrl.endsWith(API_PREFIX)) problems.push(`CHAT_PUBLIC_BASE_URL must end with ${API_PREFIX} (got "${publicBaseUrl}")`);

  const idpDriver = str('CHAT_IDP', 'embedded');
  let idp: IdpConfig;
  if (idpDriver === 'embedded') {
    idp = { driver: 'embedded', fixturePath: path.resolve(str('CHAT_IDP_FIXTURE', DEFAULT_FIXTURE)), devLogin: bool('CHAT_IDP_DEV_LOGIN', true) };
  } else if (idpDriver === 'http') {
    const raw = env.CHAT_IDP_URL;
    if (!raw) problems.push('CHAT_IDP_URL is required when CHAT_IDP=http');
    idp = {
      driver: 'http',
      url: url('CHAT_IDP_URL', raw ?? 'http://127.0.0.1:8081'),
      timeoutMs: int('CHAT_IDP_TIMEOUT_MS', 2000, 50, 60000),
      directoryKey: str('CHAT_IDP_DIRECTORY_KEY', 'dev-directory-key'),
    };
  } else {
    problems.push(`CHAT_IDP must be "embedded" or "http" (got "${idpDriver}")`);
    idp = { driver: 'embedded', fixturePath: DEFAULT_FIXTURE, devLogin: true };
  }

  const cluster = clusterSettings(env, reader, problems);
  const clustered = cluster.mode === 'redis';

  const rateDriver = str('CHAT_RATE_LIMIT_DRIVER', clustered ? 'redis' : 'memory');
  if (rateDriver !== 'memory' && rateDriver !== 'redis') problems.push(`CHAT_RATE_LIMIT_DRIVER must be "memory" or "redis" (got "${rateDriver}")`);
  if (rateDriver === 'redis' && !clustered) problems.push('CHAT_RATE_LIMIT_DRIVER=redis needs CHAT_CLUSTER=redis (and its CHAT_REDIS_URL)');
  const rateLease = { maxTokens: int('CHAT_RATE_LIMIT_LEASE', 8, 1, 1000), ms: int('CHAT_RATE_LIMIT_LEASE_MS', 1000, 1, 60_000) };

  const storeDriver = str('CHAT_STORE_DRIVER', 'sqlite');
  if (storeDriver !== 'sqlite' && storeDriver !== 'cassandra') problems.push(`CHAT_STORE_DRIVER must be "sqlite" or "cassandra" (got "${storeDriver}")`);
  const storeMode = str('CHAT_SQLITE_MODE', 'exclusive');
  if (storeMode !== 'exclusive' && storeMode !== 'shared-file') problems.push(`CHAT_SQLITE_MODE must be "exclusive" or "shared-file" (got "${storeMode}")`);
  if (clustered && storeDriver === 'sqlite' && storeMode !== 'shared-file') {
    problems.push('CHAT_CLUSTER=redis with SQLite needs CHAT_SQLITE_MODE=shared-file (every node on one machine, one file); use CHAT_STORE_DRIVER=cassandra across machines');
  }
  const storeWriter = str('CHAT_SQLITE_WRITER', 'thread');
  if (storeWriter !== 'thread' && storeWriter !== 'inline') problems.push(`CHAT_SQLITE_WRITER must be "thread" or "inline" (got "${storeWriter}")`);
  // Commits start at least this far apart (sqlite/batcher.ts, minIntervalMs): bounds the fsyncs per second under load.
  const commitIntervalMs = int('CHAT_SQLITE_COMMIT_INTERVAL_MS', 5, 0, 100);
  let store: StoreSettings = { driver: 'sqlite', mode: storeMode === 'shared-file' ? 'shared-file' : 'exclusive', writer: storeWriter === 'inline' ? 'inline' : 'thread', commitIntervalMs };
  if (storeDriver === 'cassandra') {
    const contactPoints = str('CHAT_CASSANDRA_CONTACT_POINTS', '').split(',').map((p) => p.trim()).filter(Boolean);
    if (contactPoints.length === 0) problems.push('CHAT_CASSANDRA_CONTACT_POINTS must list at least one host[:port] when CHAT_STORE_DRIVER=cassandra');
    const keyspace = str('CHAT_CASSANDRA_KEYSPACE', 'chat');
    if (!/^[a-z][a-z0-9_]{0,47}$/.test(keyspace)) problems.push(`CHAT_CASSANDRA_KEYSPACE must be a lower-case CQL identifier (got "${keyspace}")`);
    store = {
      driver: 'cassandra',
      contactPoints,
      localDataCenter: str('CHAT_CASSANDRA_LOCAL_DC', 'datacenter1'),
      keyspace,
      replicationFactor: int('CHAT_CASSANDRA_REPLICATION_FACTOR', 3, 1, 9),
      username: env.CHAT_CASSANDRA_USERNAME || null,
      password: env.CHAT_CASSANDRA_PASSWORD || null,
    };
  }
  const cursorSecret = env.CHAT_CURSOR_SECRET || null;
  if (cursorSecret !== null) {
    const bytes = decodeSecret(cursorSecret).length;
    if (bytes < 32) problems.push('CHAT_CURSOR_SECRET must hold at least 32 bytes (64 hex characters or 44 base64 characters)');
  }

  const webPushEnabled = bool('CHAT_WEB_PUSH', true);
  const vapidPublicKey = env.CHAT_VAPID_PUBLIC_KEY || null;
  const vapidPrivateKey = env.CHAT_VAPID_PRIVATE_KEY || null;
  if ((vapidPublicKey === null) !== (vapidPrivateKey === null)) {
    problems.push('CHAT_VAPID_PUBLIC_KEY and CHAT_VAPID_PRIVATE_KEY must be set together (or neither, to generate and persist a pair)');
  }
  const subject = str('CHAT_VAPID_SUBJECT', 'mailto:chat-admin@example.com');
  if (!/^(mailto:|https:)/.test(subject)) problems.push(`CHAT_VAPID_SUBJECT must be a mailto: or https: URL (got "${subject}")`);

  const pushConcurrency = int('CHAT_PUSH_CONCURRENCY', 8, 1, 1000);
  const pushTimeoutMs = int('CHAT_PUSH_TIMEOUT_MS', 10_000, 100, 120_000);
  const pushCaFile = env.CHAT_PUSH_CA_FILE ? path.resolve(env.CHAT_PUSH_CA_FILE) : null;
  if (pushCaFile !== null && !fs.existsSync(pushCaFile)) problems.push(`CHAT_PUSH_CA_FILE must name a readable PEM file (got "${env.CHAT_PUSH_CA_FILE ?? ''}")`);
  const { fcm, apns } = pushPlatformSettings(env, reader, problems);
  const presenceWindowMs = int('CHAT_PRESENCE_WINDOW_MS', 60_000, 100, 3_600_000);

  const retentionIntervalMs = int('CHAT_RETENTION_INTERVAL_MS', 3_600_000, 0, 7 * 86_400_000);
  if (retentionIntervalMs > 0 && retentionIntervalMs < 1000) {
    problems.push(`CHAT_RETENTION_INTERVAL_MS must be 0 (off) or at least 1000 (got "${env.CHAT_RETENTION_INTERVAL_MS ?? ''}")`);
  }

  const realtimeSecret = env.CHAT_REALTIME_SECRET || null;
  if (realtimeSecret !== null) {
    const bytes = decodeSecret(realtimeSecret).length;
    if (bytes < 32) problems.push('CHAT_REALTIME_SECRET must hold at least 32 bytes (64 hex characters or 44 base64 characters)');
  }
  const realtime: RealtimeConfig = {
    secret: realtimeSecret,
    tokenTtlMs: int('CHAT_REALTIME_TOKEN_TTL_MS', 300_000, 1000, 3_600_000),
    keepAliveMs: int('CHAT_REALTIME_KEEPALIVE_MS', 15_000, 100, 300_000),
    maxBufferedBytes: int('CHAT_REALTIME_MAX_BUFFERED_BYTES', 1024 * 1024, 1024, 256 * 1024 * 1024),
    maxStreams: int('CHAT_REALTIME_MAX_STREAMS', 20_000, 1, 1_000_000),
    maxStreamsPerUser: int('CHAT_REALTIME_MAX_STREAMS_PER_USER', 16, 1, 100_000),
    flushMs: int('CHAT_REALTIME_FLUSH_MS', 0, 0, 1000),
  };
  const busWindow = {
    maxEventsPerChannel: int('CHAT_BUS_WINDOW_EVENTS', 1000, 1, 1_000_000),
    maxAgeMs: int('CHAT_BUS_WINDOW_MS', 300_000, 1000, 86_400_000),
  };

  const logLevel = str('CHAT_LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`CHAT_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${logLevel}")`);
  }

  const config: Config = {
    host,
    port,
    publicBaseUrl,
    publicBaseUrlExplicit: Boolean(env.CHAT_PUBLIC_BASE_URL),
    dataDir: path.resolve(str('CHAT_DATA_DIR', './data')),
    metricsHost: str('CHAT_METRICS_HOST', '127.0.0.1'),
    metricsPort: int('CHAT_METRICS_PORT', 9464, 0, 65535),
    logLevel,
    idp,
    identityCacheTtlMs: int('CHAT_IDENTITY_CACHE_TTL_MS', 30000, 0, 3600000),
    revocationPollMs: int('CHAT_REVOCATION_POLL_MS', 2000, 100, 600000),
    tokenCacheSize: int('CHAT_TOKEN_CACHE_SIZE', 100000, 0, 10000000),
    bodyLimitBytes: int('CHAT_BODY_LIMIT_BYTES', 256 * 1024, 1024, 64 * 1024 * 1024),
    rateLimit: rateDriver === 'redis' ? { driver: 'redis', lease: rateLease } : { driver: 'memory' },
    store,
    cursorSecret,
    rates: {
      client: rate('CHAT_RATE_CLIENT', { limit: 600, windowSeconds: 60 }),
      send: rate('CHAT_RATE_SEND', { limit: 30, windowSeconds: 10 }),
      lookup: rate('CHAT_RATE_LOOKUP', { limit: 20, windowSeconds: 10 }),
    },
    webPush: { enabled: webPushEnabled, vapidPublicKey, vapidPrivateKey, subject, concurrency: pushConcurrency, timeoutMs: pushTimeoutMs, caFile: pushCaFile, fcm, apns },
    presence: { driver: clustered ? 'redis' : 'memory', windowMs: presenceWindowMs },
    shutdownGraceMs: int('CHAT_SHUTDOWN_GRACE_MS', 10000, 0, 600000),
    retentionIntervalMs,
    realtime,
    busWindow,
    cluster,
    web: { clientId: str('CHAT_WEB_CLIENT_ID', 'chat-web') },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
