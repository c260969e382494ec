/**
 * The environment of each process of a loopback cluster. Only what makes it a cluster is set
 * here; every other CHAT_* setting (log level, rates, ...) passes through from the caller's
 * environment, so `CHAT_LOG_LEVEL=debug npm run cluster -- up` works as for a single node.
 */
import fs from 'node:fs';
import path from 'node:path';
import { IDP_PREFIX } from './haproxy.ts';
import type { ClusterLayout, NodeLayout } from './layout.ts';
import type { ClusterSecrets } from './secrets.ts';
import type { ClusterStore } from './state.ts';

export type Env = Record<string, string>;

export interface IdpSettings {
  /** The IdP's fixture file (absolute). */
  fixturePath: string;
  /** A key of the fixture's `directory_api_keys`: what the nodes present to the IdP. */
  directoryKey: string;
}

/** The first directory key of a fixture: the nodes need one the IdP accepts. */
export function idpSettings(fixturePath: string): IdpSettings {
  const fixture: unknown = JSON.parse(fs.readFileSync(fixturePath, 'utf8'));
  const keys = typeof fixture === 'object' && fixture !== null ? (fixture as Record<string, unknown>).directory_api_keys : undefined;
  const key = Array.isArray(keys) ? keys.find((k): k is string => typeof k === 'string' && k !== '') : undefined;
  if (key === undefined) throw new Error(`${fixturePath} lists no directory_api_keys: the nodes could not read the IdP's directory`);
  return { fixturePath: path.resolve(fixturePath), directoryKey: key };
}

export const lbUrl = (layout: ClusterLayout): string => `http://127.0.0.1:${layout.lbPort}`;
/** The IdP as clients see it: behind the balancer at /idp, as a single node's embedded IdP. Its issuer. */
export const idpPublicUrl = (layout: ClusterLayout): string => `${lbUrl(layout)}${IDP_PREFIX}`;
/** The IdP as the nodes reach it: directly, under the same path. */
export const idpUrl = (layout: ClusterLayout): string => `http://127.0.0.1:${layout.idpPort}${IDP_PREFIX}`;
export const redisUrl = (layout: ClusterLayout): string => `redis://127.0.0.1:${layout.redisPort}`;
/** CHAT_REDIS_CLUSTER_NODES of a layout with a Redis Cluster. */
export const redisClusterNodes = (layout: ClusterLayout): string => layout.redisCluster.map((r) => `127.0.0.1:${r.port}`).join(',');
/** Every node shares one SQLite file (shared-file mode) and so one data directory. */
export const dataDir = (layout: ClusterLayout): string => path.join(layout.dir, 'data');

export function idpEnv(layout: ClusterLayout, idp: IdpSettings): Env {
  return {
    IDP_HOST: '127.0.0.1',
    IDP_PORT: String(layout.idpPort),
    // The issuer is the IdP's URL as clients reach it, through the balancer (tokens' `iss`, the
    // discovery document); it serves under the issuer's path, /idp, which the balancer routes to
    // it unchanged. The nodes reach it directly (CHAT_IDP_URL below).
    IDP_ISSUER: idpPublicUrl(layout),
    IDP_FIXTURE: idp.fixturePath,
    IDP_DEV_LOGIN: 'true',
    // Its signing keys survive a restart of the cluster: tokens issued before stay valid.
    IDP_DATA_DIR: path.join(layout.dir, 'idp'),
  };
}

/** The store settings of a node: one SQLite file shared by every node, or the cluster's Cassandra. */
export function storeEnv(store: ClusterStore): Env {
  if (store.driver === 'sqlite') return { CHAT_STORE_DRIVER: 'sqlite', CHAT_SQLITE_MODE: 'shared-file' };
  return {
    CHAT_STORE_DRIVER: 'cassandra',
    CHAT_CASSANDRA_CONTACT_POINTS: store.contactPoints.join(','),
    CHAT_CASSANDRA_LOCAL_DC: store.localDataCenter,
    CHAT_CASSANDRA_KEYSPACE: store.keyspace,
    CHAT_CASSANDRA_REPLICATION_FACTOR: String(store.replicationFactor),
  };
}

export function nodeEnv(layout: ClusterLayout, node: NodeLayout, secrets: ClusterSecrets, idp: IdpSettings, store: ClusterStore = { driver: 'sqlite' }): Env {
  return {
    CHAT_HOST: '127.0.0.1',
    CHAT_PORT: String(node.port),
    // Stream URLs and links the API hands out must point at the load balancer, not at one node.
    CHAT_PUBLIC_BASE_URL: `${lbUrl(layout)}/api/v1`,
    CHAT_METRICS_HOST: '127.0.0.1',
    CHAT_METRICS_PORT: String(node.metricsPort),
    // With Cassandra the directory still holds each node's VAPID keys file and secrets fallbacks.
    CHAT_DATA_DIR: dataDir(layout),
    ...storeEnv(store),
    CHAT_IDP: 'http',
    CHAT_IDP_URL: idpUrl(layout),
    CHAT_IDP_DIRECTORY_KEY: idp.directoryKey,
    CHAT_CLUSTER: 'redis',
    ...(layout.redisCluster.length > 0 ? { CHAT_REDIS_CLUSTER_NODES: redisClusterNodes(layout) } : { CHAT_REDIS_URL: redisUrl(layout) }),
    CHAT_REDIS_KEY_PREFIX: 'chat:',
    CHAT_NODE_ID: node.id,
    CHAT_INTERNAL_HOST: '127.0.0.1',
    CHAT_INTERNAL_PORT: String(node.internalPort),
    CHAT_INTERNAL_URL: `http://127.0.0.1:${node.internalPort}`,
    CHAT_CLUSTER_SECRET: secrets.clusterSecret,
    CHAT_CURSOR_SECRET: secrets.cursorSecret,
    CHAT_REALTIME_SECRET: secrets.realtimeSecret,
    CHAT_VAPID_PUBLIC_KEY: secrets.vapidPublicKey,
    CHAT_VAPID_PRIVATE_KEY: secrets.vapidPrivateKey,
  };
}

/** The caller's environment under ours: the cluster's settings win over stray ones in the shell. */
export function withBase(env: Env, base: NodeJS.ProcessEnv = process.env): Env {
  const out: Env = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = v;
  return { ...out, ...env };
}
