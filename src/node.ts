/**
 * One chat node: wires configuration, drivers and the edge, listens, and shuts down gracefully.
 * `npm start` runs this through src/main.ts; tests start it as a child process the same way.
 */
import uWS, { type TemplatedApp, type us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { openApiText } from './api/openapi.ts';
import { ROUTES, WEB_SIGN_IN_PREFIX, WEB_SIGN_IN_ROUTES } from './api/routes/index.ts';
import type { Services } from './api/services.ts';
import { PageCache } from './api/page-cache.ts';
import { registerPageCacheMetrics, registerStoreMemoMetrics } from './api/page-cache-metrics.ts';
import { API_PREFIX, type Config } from './config/index.ts';
import { ApiError } from './errors/catalog.ts';
import { Edge } from './http/edge.ts';
import { refuseMalformed } from './http/framing.ts';
import { checkHeaderLimit } from './http/header-limit.ts';
import { sendError, type Exchange } from './http/respond.ts';
import { notFoundAtRoot, serveOpenApi } from './http/operational.ts';
import { ProfileWrites } from './identity/profile-writes.ts';
import { createIdentityDirectory } from './identity/index.ts';
import { IdentityService } from './identity/identity-service.ts';
import { createLogger, type Logger } from './log/index.ts';
import { BusErrorReport } from './metrics/bus-errors.ts';
import { Metrics } from './metrics/index.ts';
import { loadVapidKeys } from './push/vapid.ts';
import { createPushSenders, PushGiveUps, PushWorker, registerPushMetrics } from './push/index.ts';
import { ActorHost } from './actors/index.ts';
import { registerActorMetrics } from './actors/actor-metrics.ts';
import { openDrivers } from './drivers.ts';
import { startSharding } from './sharding/index.ts';
import { registerShardingMetrics } from './sharding/metrics.ts';
import { CursorCodec, loadCursorSecret } from './api/paging/cursor.ts';
import { newRetentionStats, startRetentionJob } from './retention/retention-job.ts';
import { redisRetentionLease } from './retention/retention-lease.ts';
import { registerRetentionMetrics } from './retention/retention-metrics.ts';
import { Hub, RealtimeCredentials, STREAM_PATH, loadRealtimeSecret, streamHandler } from './realtime/index.ts';
import { readableConversations } from './realtime/readable.ts';
import { SqliteChatStore } from './store/sqlite/sqlite-store.ts';
import { ThreadedSqliteStore } from './store/sqlite/writer-thread.ts';
import { registerStoreWriteMetrics } from './metrics/store-metrics.ts';
import { WebSignIn } from './identity/web-sign-in.ts';
import { mountWebApp, WEB_APP_PATH } from './web/static-app.ts';
import { PROJECT_ROOT } from './config/paths.ts';
import path from 'node:path';
import { registerCassandraMetrics, registerRedisMetrics } from './metrics/driver-metrics.ts';
import { RedisHealth } from './redis/health.ts';
import { CassandraChatStore } from './store/cassandra/cassandra-store.ts';

export interface RunningNode {
  port: number;
  metricsPort: number;
  publicBaseUrl: string;
  /** The web app's address, or null when it is not built (dist/web). */
  webAppUrl: string | null;
  log: Logger;
  /** Stops taking requests, waits for those in flight (up to the grace period), closes drivers. */
  close(): Promise<void>;
  /**
   * Resolves if the node can no longer serve: its SQLite writer thread ended (it is then no
   * longer ready). main.ts exits the process, for the supervisor to restart it.
   */
  failed: Promise<Error>;
}

export async function startNode(config: Config): Promise<RunningNode> {
  const log = createLogger(config.logLevel);
  const metrics = new Metrics();
  const app: TemplatedApp = uWS.App();
  let ready = false;
  let edge: Edge | null = null;

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(config.host, config.port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${config.host}:${config.port}`))));
  });
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  const publicBaseUrl = config.publicBaseUrlExplicit ? config.publicBaseUrl : `http://${config.host}:${port}${API_PREFIX}`;
  const cfg: Config = Object.assign({}, config, { port, publicBaseUrl });

  const { directory, oauth, mount } = await createIdentityDirectory(cfg, log);
  const publicOrigin = publicBaseUrl.slice(0, -API_PREFIX.length);
  // The embedded IdP's requests are counted with the API's (route label `/idp/...`).
  mount?.(app, (route, method, status, seconds) => metrics.observeRequest(route, method, status, seconds));
  const identity = new IdentityService(directory, {
    cacheTtlMs: cfg.identityCacheTtlMs,
    revocationPollMs: cfg.revocationPollMs,
    tokenCacheSize: cfg.tokenCacheSize,
  }, metrics, log);
  await identity.start();
  const pushGiveUps = new PushGiveUps(log);
  const redisHealth = new RedisHealth();
  // Gaps and failed listeners, counted and logged once per kind and second (a fan log gap reaches
  // every fanned channel at once).
  const busErrors = new BusErrorReport(metrics.registry, (obj, msg) => log.warn(obj, msg));
  const drivers = await openDrivers(cfg, {
    redisHealth,
    onBusListenerError: busErrors.handle,
    onPushGiveUp: pushGiveUps.handle,
  });
  const { store, bus, presence, rateLimiter } = drivers;
  if (drivers.redis) registerRedisMetrics(metrics.registry, redisHealth);
  if (store instanceof CassandraChatStore && store.driverHealth) registerCassandraMetrics(metrics.registry, store.driverHealth);
  const vapid = loadVapidKeys(cfg.webPush, cfg.dataDir);
  const cursors = new CursorCodec(loadCursorSecret(cfg.cursorSecret, cfg.dataDir));
  // The service learns its users' profiles from the IdP as they call (display names in history,
  // user lookup). Best effort: a failed write only delays the profile to the next fetch. A
  // profile this node wrote unchanged in the last 5 minutes is not written again (profile-writes.ts).
  const profileWrites = new ProfileWrites();
  identity.onProfile = (tenantId, profile) => {
    if (!profileWrites.due(tenantId, profile)) return;
    store.profiles.upsert(tenantId, [profile], 'idp').catch((err: unknown) => {
      profileWrites.forget(tenantId, profile.user_id);
      log.warn({ err: (err as Error).message }, 'profile upsert failed');
    });
  };
  // Role-permission overrides of the admin mapping change what users hold (effective-capabilities.ts).
  identity.effective.useOverrides(store.roleOverrides);
  const retentionStats = newRetentionStats();
  registerRetentionMetrics(metrics.registry, retentionStats);
  // In a cluster one node purges per interval (a Redis lease); a cluster of one just purges.
  const retentionRedis = drivers.redis && cfg.retentionIntervalMs > 0 ? drivers.redis('chat-retention') : null;
  const retention = startRetentionJob(store, cfg.retentionIntervalMs, log, {
    stats: retentionStats,
    ...(retentionRedis && cfg.cluster.mode === 'redis'
      ? { lease: redisRetentionLease(retentionRedis, `${cfg.cluster.keyPrefix}retention:lease`, cfg.cluster.nodeId, cfg.retentionIntervalMs) }
      : {}),
  });
  // Push jobs are enqueued only when this node's push worker consumes them (no web push, FCM or
  // APNs configured: no worker, no jobs kept). Delivery runs off the send path.
  const senders = createPushSenders({ vapid, fcm: cfg.webPush.fcm, apns: cfg.webPush.apns, timeoutMs: cfg.webPush.timeoutMs, caFile: cfg.webPush.caFile });
  const pushOn = Object.keys(senders).length > 0;
  const pushWorker = pushOn
    ? new PushWorker({
        bus,
        store,
        presence,
        senders,
        concurrency: cfg.webPush.concurrency,
        log: { warn: (obj, msg) => log.warn(obj, msg), debug: (obj, msg) => log.debug(obj, msg) },
      })
    : null;
  if (pushWorker) {
    registerPushMetrics(metrics.registry, pushWorker.stats, pushGiveUps, () => actors.stats().pushJobsSkippedOnline);
    pushWorker.start();
  }
  const actors = new ActorHost({ store, bus, enqueuePush: pushOn, presence, log: { warn: (obj, msg) => log.warn(obj, msg) } });
  registerActorMetrics(metrics.registry, () => actors.stats());
  // In a cluster, conversation operations go to the owning node (ring over Redis membership);
  // the local host runs what this node owns.
  const cluster = cfg.cluster;
  const sharding =
    cluster.mode === 'redis' && drivers.redis
      ? await startSharding({
          actorHost: actors,
          redisFactory: drivers.redis,
          keyPrefix: cluster.keyPrefix,
          nodeId: cluster.nodeId,
          internal: { host: cluster.internalHost, port: cluster.internalPort, ...(cluster.internalUrl ? { url: cluster.internalUrl } : {}) },
          secret: cluster.secret,
          timings: { heartbeatMs: cluster.heartbeatMs, ttlMs: cluster.nodeTtlMs, forwardTimeoutMs: cluster.forwardTimeoutMs },
          log: { info: (obj, msg) => log.info(obj, msg), warn: (obj, msg) => log.warn(obj, msg) },
        })
      : null;
  if (sharding) registerShardingMetrics(metrics.registry, sharding);
  const pages = new PageCache();
  registerPageCacheMetrics(metrics.registry, pages);
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => (fail = resolve));
  if (store instanceof ThreadedSqliteStore) {
    store.onWriterLost((error) => {
      ready = false;
      log.fatal({ err: error.message }, 'the SQLite writer thread ended: no write can succeed');
      fail(error);
    });
  }
  if (store instanceof SqliteChatStore || store instanceof ThreadedSqliteStore) {
    registerStoreMemoMetrics(metrics.registry, { gate: () => store.gateCacheStats(), push_devices: () => store.deviceCacheStats(), profiles: () => store.profileCacheStats() });
    registerStoreWriteMetrics(metrics.registry, store);
  }
  const services: Services = { config: cfg, identity, vapid, store, cursors, actors: sharding?.actors ?? actors, bus, presence, pages };
  // Idempotency-Key claims are owned by this process: in a cluster, its membership instance, and
  // another node's claim is taken over once that node leaves the view (http/idempotency.ts).
  if (sharding) services.claimOwner = () => sharding.membership.claimOwner();
  // The realtime stream: credentials signed with a secret every node shares; one hub per node.
  const realtimeCredentials = new RealtimeCredentials(loadRealtimeSecret(cfg.realtime.secret, cfg.dataDir));
  services.realtime = realtimeCredentials;
  services.signIn = new WebSignIn(oauth, { clientId: cfg.web.clientId, appUrl: `${publicOrigin}${WEB_APP_PATH}` });
  const hub = new Hub(bus, {
    keepAliveMs: cfg.realtime.keepAliveMs,
    maxStreams: cfg.realtime.maxStreams,
    maxStreamsPerUser: cfg.realtime.maxStreamsPerUser,
    onError: (err, channel) => log.warn({ err: (err as Error).message, channel }, 'realtime delivery failed'),
  });
  metrics.observeStreams(hub);
  edge = new Edge(ROUTES, { config: cfg, identity, rateLimiter, metrics, log, services });
  const signInEdge = new Edge(WEB_SIGN_IN_ROUTES, { config: cfg, identity, rateLimiter, metrics, log, services, prefix: WEB_SIGN_IN_PREFIX });

  const live = edge;
  app.get(
    `${API_PREFIX}${STREAM_PATH}`,
    streamHandler({
      hub,
      bus,
      credentials: realtimeCredentials,
      readable: readableConversations(store),
      options: { maxBufferedBytes: cfg.realtime.maxBufferedBytes, retryMs: 3000, bodyLimitBytes: cfg.bodyLimitBytes, flushMs: cfg.realtime.flushMs },
      onError: (err) => log.warn({ err: (err as Error).message }, 'realtime resume failed'),
    }),
  );
  app.any(`${API_PREFIX}/*`, live.handle);
  app.any(API_PREFIX, live.handle);
  app.any('/auth/*', signInEdge.handle);
  app.get('/healthz', (res, req) => {
    if (refuseMalformed(res, req)) return;
    res.writeHeader('Content-Type', 'application/json').end('{"status":"ok"}');
  });
  app.get('/readyz', (res, req) => {
    if (refuseMalformed(res, req)) return;
    if (ready) res.writeHeader('Content-Type', 'application/json').end('{"status":"ready"}');
    else res.writeStatus('503 Service Unavailable').writeHeader('Content-Type', 'application/json').end('{"status":"not_ready"}');
  });
  serveOpenApi(app, openApiText(ROUTES));
  // The web app: static files from memory on routes of their own (src/web/static-app.ts).
  const web = mountWebApp(app, { dir: path.join(PROJECT_ROOT, 'dist/web'), connectOrigins: [publicOrigin] });
  app.any('/*', (res, req) => {
    if (refuseMalformed(res, req)) return;
    const ex: Exchange = { res, aborted: false, done: false, headers: {}, status: 0 };
    res.onAborted(() => (ex.aborted = true));
    const url = req.getUrl();
    sendError(ex, new ApiError('not_found', notFoundAtRoot(cfg, req.getMethod().toUpperCase(), url)), url);
  });

  const metricsServer = await metrics.listen(cfg.metricsHost, cfg.metricsPort);
  const headerSectionLimit = checkHeaderLimit(log);
  ready = true;
  log.info(
    { port, metrics_port: metricsServer.port, header_section_limit: headerSectionLimit, public_base_url: publicBaseUrl, web_app: web.files > 0 ? `${publicOrigin}${WEB_APP_PATH}` : 'not built (npm run build)', drivers: { identity: directory.driver, rate_limit: rateLimiter.driver, store: store.driver, presence: presence.driver, bus: bus.driver }, cluster: cfg.cluster.mode, node_id: cluster.mode === 'redis' ? cluster.nodeId : null, internal_port: sharding?.internalPort ?? null, web_push: vapid.publicKey !== '', push: Object.keys(senders) },
    'chat node listening',
  );

  let closing: Promise<void> | null = null;
  return {
    port,
    metricsPort: metricsServer.port,
    publicBaseUrl,
    webAppUrl: web.files > 0 ? `${publicOrigin}${WEB_APP_PATH}` : null,
    log,
    failed,
    close() {
      closing ??= (async () => {
        ready = false;
        // Out of the ring first: peers stop forwarding here and take over what this node owned
        // (the store's fencing orders the handover), while requests in flight still finish.
        await sharding?.leave().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'leaving the ring failed'));
        uWS.us_listen_socket_close(listenSocket);
        live.draining = true;
        signInEdge.draining = true;
        hub.close();
        const deadline = Date.now() + cfg.shutdownGraceMs;
        while (live.inflight + signInEdge.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        if (live.inflight > 0) log.warn({ inflight: live.inflight }, 'shutdown grace period over with requests in flight');
        await retention.stop();
        retentionRedis?.disconnect();
        await identity.close();
        await rateLimiter.close();
        await actors.close();
        await sharding?.close({ graceMs: 1000 });
        // Pushes queued in memory (local bus) go out within the grace period before the worker stops.
        const dropped = pushWorker && bus.drainJobs ? await bus.drainJobs(deadline) : 0;
        if (dropped > 0) log.warn({ jobs: dropped }, 'push jobs dropped at shutdown: the grace period ended first');
        await pushWorker?.close();
        await presence.close();
        await bus.close();
        busErrors.flush();
        await store.close();
        await metricsServer.close();
        log.info('chat node stopped');
      })();
      return closing;
    },
  };
}
