/**
 * Prometheus metrics (prom-client) served on their own port, apart from client traffic.
 * Names: `chat_` prefix, `_total` counters, `_seconds` histograms; labels are bounded: route
 * template, method, status, driver — never an id. Process metrics keep their standard names.
 */
import http from 'node:http';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { registerEventLoopMetrics } from './event-loop.ts';
import { EventCounter, RequestSeries } from './request-series.ts';
import { registerStreamMetrics, type StreamSource } from './stream-metrics.ts';

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new RequestSeries();
  readonly identityLookups: Counter<'kind' | 'result'>;
  readonly tokenVerifications: EventCounter<'cached' | 'verified' | 'invalid' | 'revoked'>;
  readonly rateLimited: Counter<'policy'>;

  constructor() {
    // Node.js process metrics under their standard names (process_*, nodejs_*), which Node.js
    // dashboards query; the event-loop gauges are ours (event-loop.ts).
    collectDefaultMetrics({ register: this.registry });
    registerEventLoopMetrics(this.registry);
    this.requests.register(this.registry);
    this.identityLookups = new Counter({
      name: 'chat_identity_lookups_total',
      help: 'Identity provider lookups by kind and result (hit = fresh cache, miss = fetched, error = unreachable)',
      labelNames: ['kind', 'result'],
      registers: [this.registry],
    });
    this.tokenVerifications = new EventCounter(this.registry, 'chat_token_verifications_total', 'Bearer token checks by result (cached, verified, invalid, revoked)', 'result');
    this.rateLimited = new Counter({
      name: 'chat_rate_limited_total',
      help: 'Requests refused with rate_limited, by policy',
      labelNames: ['policy'],
      registers: [this.registry],
    });
  }

  /** The node's realtime streams (its hub), read at scrape time: stream-metrics.ts. Once per node. */
  observeStreams(source: StreamSource): void {
    registerStreamMetrics(this.registry, source);
  }

  observeRequest(route: string, method: string, status: number, seconds: number): void {
    this.requests.observe(route, method, status, seconds);
  }

  /** Serves GET /metrics on its own port; resolves with the bound port. */
  listen(host: string, port: number): Promise<{ port: number; close: () => Promise<void> }> {
    const server = http.createServer((req, res) => {
      if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics') {
        this.registry.metrics().then(
          (text) => {
            res.writeHead(200, { 'Content-Type': this.registry.contentType });
            res.end(text);
          },
          () => {
            res.writeHead(500);
            res.end();
          },
        );
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found\n');
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        const addr = server.address();
        resolve({
          port: typeof addr === 'object' && addr ? addr.port : port,
          close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
        });
      });
    });
  }
}
