/**
 * Configuration: every setting comes from the environment, is validated here once, and the
 * process refuses to start with one clear line per problem (see README's configuration table).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from './paths.ts';
import { decodeSecret } from './secrets.ts';

export interface RateRule {
  limit: number;
  windowSeconds: number;
}

export type IdpConfig =
  | { driver: 'embedded'; fixturePath: string; devLogin: boolean }
  | { driver: 'http'; url: string; timeoutMs: number; directoryKey: string };

export type RateLimitConfig = { driver: 'memory' } | { driver: 'redis' };

/** Storage: the embedded SQLite file in the data directory, or Cassandra / ScyllaDB. */
export type StoreSettings =
  | { driver: 'sqlite'; mode: 'exclusive' | 'shared-file' }
  | { driver: 'cassandra'; contactPoints: string[]; localDataCenter: string; keyspace: string; replicationFactor: number; username: string | null; password: string | null };

/**
 * The cluster (docs/sharding.md, docs/deploy.md). `none`: a cluster of one, everything in
 * process. `redis`: membership, placement, the bus, presence and rate limits on Redis, and
 * requests for conversations owned elsewhere forwarded over the internal port.
 */
export type ClusterConfig =
  | { mode: 'none' }
  | {
      mode: 'redis';
      redisUrl: string;
      keyPrefix: string;
      nodeId: string;
      internalHost: string;
      /** 0: any free port (the advertised URL is then fixed up after listen). */
      internalPort: number;
      /** How peers reach this node's internal port; null: derived from host and port. */
      internalUrl: string | null;
      secret: string;
      heartbeatMs: number;
      nodeTtlMs: number;
      forwardTimeoutMs: number;
    };

/** FCM HTTP v1 (src/push/fcm-sender.ts); null: fcm tokens are stored but not delivered. */
export interface FcmSettings {
  serviceAccountFile: string;
  projectId: string | null;
  endpoint: string | null;
  tokenUri: string | null;
}

/** APNs with token auth (src/push/apns-sender.ts); null: apns tokens are stored but not delivered. */
export interface ApnsSettings {
  keyFile: string;
  keyId: string;
  teamId: string;
  topic: string;
  /** `production`, `sandbox`, or an https origin. */
  origin: string;
}

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

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const v = env[name];
    return v === undefined || v === '' ? fallback : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
    if (['0', 'false', 'off', 'no'].includes(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const url = (name: string, value: string): string => {
    try {
      const u = new URL(value);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      return value.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an absolute http(s) URL (got "${value}")`);
      return value;
    }
  };
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

  const clusterMode = str('CHAT_CLUSTER', 'none');
  if (clusterMode !== 'none' && clusterMode !== 'redis') problems.push(`CHAT_CLUSTER must be "none" or "redis" (got "${clusterMode}")`);
  const clustered = clusterMode === 'redis';
  let cluster: ClusterConfig = { mode: 'none' };
  if (clustered) {
    const redisUrl = str('CHAT_REDIS_URL', '');
    if (!/^rediss?:\/\//.test(redisUrl)) problems.push(`CHAT_REDIS_URL must be a redis:// or rediss:// URL when CHAT_CLUSTER=redis (got "${redisUrl}")`);
    const secret = str('CHAT_CLUSTER_SECRET', '');
    if (secret.length < 16) problems.push('CHAT_CLUSTER_SECRET must be set (at least 16 characters, the same on every node) when CHAT_CLUSTER=redis');
    for (const name of ['CHAT_CURSOR_SECRET', 'CHAT_REALTIME_SECRET']) {
      if (!env[name]) problems.push(`${name} must be set (the same on every node) when CHAT_CLUSTER=redis: a secret generated per node would not verify on the others`);
    }
    const nodeId = str('CHAT_NODE_ID', `${os.hostname()}-${process.pid}`);
    if (!/^[A-Za-z0-9_.:-]{1,100}$/.test(nodeId)) problems.push(`CHAT_NODE_ID must be 1-100 characters of letters, digits, _ . : - (got "${nodeId}")`);
    const heartbeatMs = int('CHAT_HEARTBEAT_MS', 1000, 50, 60_000);
    const nodeTtlMs = int('CHAT_NODE_TTL_MS', 5000, 200, 600_000);
    if (nodeTtlMs < 2 * heartbeatMs) problems.push(`CHAT_NODE_TTL_MS must be at least twice CHAT_HEARTBEAT_MS (got ${nodeTtlMs} and ${heartbeatMs})`);
    const internalUrl = env.CHAT_INTERNAL_URL ? url('CHAT_INTERNAL_URL', env.CHAT_INTERNAL_URL) : null;
    cluster = {
      mode: 'redis',
      redisUrl,
      keyPrefix: str('CHAT_REDIS_KEY_PREFIX', 'chat:'),
      nodeId,
      internalHost: str('CHAT_INTERNAL_HOST', str('CHAT_HOST', '127.0.0.1')),
      internalPort: int('CHAT_INTERNAL_PORT', 0, 0, 65535),
      internalUrl,
      secret,
      heartbeatMs,
      nodeTtlMs,
      forwardTimeoutMs: int('CHAT_FORWARD_TIMEOUT_MS', 5000, 100, 120_000),
    };
  }

  const rateDriver = str('CHAT_RATE_LIMIT_DRIVER', clustered ? 'redis' : 'memory');
  if (rateDriver !== 'memory' && rateDriver !== 'redis') problems.push(`CHAT_RATE_LIMIT_DRIVER must be "memory" or "redis" (got "${rateDriver}")`);
  if (rateDriver === 'redis' && !clustered) problems.push('CHAT_RATE_LIMIT_DRIVER=redis needs CHAT_CLUSTER=redis (and its CHAT_REDIS_URL)');

  const storeDriver = str('CHAT_STORE_DRIVER', 'sqlite');
  if (storeDriver !== 'sqlite' && storeDriver !== 'cassandra') problems.push(`CHAT_STORE_DRIVER must be "sqlite" or "cassandra" (got "${storeDriver}")`);
  const storeMode = str('CHAT_SQLITE_MODE', 'exclusive');
  if (storeMode !== 'exclusive' && storeMode !== 'shared-file') problems.push(`CHAT_SQLITE_MODE must be "exclusive" or "shared-file" (got "${storeMode}")`);
  if (clustered && storeDriver === 'sqlite' && storeMode !== 'shared-file') {
    problems.push('CHAT_CLUSTER=redis with SQLite needs CHAT_SQLITE_MODE=shared-file (every node on one machine, one file); use CHAT_STORE_DRIVER=cassandra across machines');
  }
  let store: StoreSettings = { driver: 'sqlite', mode: storeMode === 'shared-file' ? 'shared-file' : 'exclusive' };
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
  const fileSetting = (name: string): string | null => {
    const raw = env[name];
    if (!raw) return null;
    const file = path.resolve(raw);
    if (!fs.existsSync(file)) problems.push(`${name} must name a readable file (got "${raw}")`);
    return file;
  };
  const fcmFile = fileSetting('CHAT_FCM_SERVICE_ACCOUNT_FILE');
  const fcm: FcmSettings | null = fcmFile
    ? {
        serviceAccountFile: fcmFile,
        projectId: env.CHAT_FCM_PROJECT_ID || null,
        endpoint: env.CHAT_FCM_ENDPOINT ? url('CHAT_FCM_ENDPOINT', env.CHAT_FCM_ENDPOINT) : null,
        tokenUri: env.CHAT_FCM_TOKEN_URI ? url('CHAT_FCM_TOKEN_URI', env.CHAT_FCM_TOKEN_URI) : null,
      }
    : null;
  const apnsFile = fileSetting('CHAT_APNS_KEY_FILE');
  let apns: ApnsSettings | null = null;
  if (apnsFile) {
    const keyId = str('CHAT_APNS_KEY_ID', '');
    const teamId = str('CHAT_APNS_TEAM_ID', '');
    const topic = str('CHAT_APNS_TOPIC', '');
    if (!/^[A-Z0-9]{10}$/i.test(keyId)) problems.push(`CHAT_APNS_KEY_ID must be the 10-character key id (got "${keyId}")`);
    if (!/^[A-Z0-9]{10}$/i.test(teamId)) problems.push(`CHAT_APNS_TEAM_ID must be the 10-character team id (got "${teamId}")`);
    if (topic === '') problems.push('CHAT_APNS_TOPIC must be the app bundle id when CHAT_APNS_KEY_FILE is set');
    const origin = str('CHAT_APNS_ENV', 'production');
    if (origin !== 'production' && origin !== 'sandbox' && !/^https:\/\//.test(origin)) problems.push(`CHAT_APNS_ENV must be production, sandbox or an https:// origin (got "${origin}")`);
    apns = { keyFile: apnsFile, keyId, teamId, topic, origin };
  } else {
    for (const name of ['CHAT_APNS_KEY_ID', 'CHAT_APNS_TEAM_ID', 'CHAT_APNS_TOPIC']) {
      if (env[name]) problems.push(`${name} is set but CHAT_APNS_KEY_FILE is not: APNs needs its key file`);
    }
  }
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
    rateLimit: { driver: rateDriver === 'redis' ? 'redis' : 'memory' },
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
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
