/**
 * Serves the service's own web app (built by Vite from web/ into dist/web) under `/app/`, on
 * routes of its own beside the API's, so the API hot path does not change at all.
 *
 * - Every file is read once at start, with the brotli and gzip forms the build wrote beside it
 *   (web/vite.config.ts; made here, quickly, when absent); a request is a Map lookup and one
 *   write. Only files of the build are served (no path ever reaches the file system).
 * - Caching: content-hashed assets (`/app/assets/*`) are immutable for a year; `index.html`,
 *   the service worker and everything else are revalidated (`no-cache` with an ETag; 304 on
 *   `If-None-Match`), so a new build is picked up on the next load.
 * - Security headers on every answer: a strict CSP (scripts and styles from this origin only,
 *   no inline code, no framing), `nosniff`, `Referrer-Policy: no-referrer` (the sign-in code
 *   passes through the address bar).
 * - `/` and `/app` redirect to `/app/`. Without a build, `/app/` says how to make one.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';

export const WEB_APP_PATH = '/app/';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};
const COMPRESSIBLE = /^(text\/|application\/(json|manifest\+json)|image\/svg)/;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

interface Asset {
  type: string;
  etag: string;
  cacheControl: string;
  identity: Buffer;
  br: Buffer | null;
  gzip: Buffer | null;
}

export interface WebAppOptions {
  /** The built app (dist/web). */
  dir: string;
  /** Origins the app's scripts may connect to besides its own (the public API origin, when another). */
  connectOrigins: string[];
}

export function contentSecurityPolicy(connectOrigins: readonly string[]): string {
  const connect = ["'self'", ...connectOrigins].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: https:",
    `connect-src ${connect}`,
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Reads the build once. Returns null when there is none. */
export function loadWebApp(dir: string): Map<string, Asset> | null {
  if (!fs.existsSync(path.join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  const walk = (sub: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) {
        walk(rel);
        continue;
      }
      if (/\.(br|gz)$/.test(entry.name) || entry.name.startsWith('.')) continue;
      const file = path.join(dir, rel);
      const body = fs.readFileSync(file);
      const type = TYPES[path.extname(entry.name)] ?? 'application/octet-stream';
      const compress = COMPRESSIBLE.test(type) && body.length > 512;
      const made = (ext: string, make: () => Buffer): Buffer | null => (!compress ? null : fs.existsSync(`${file}${ext}`) ? fs.readFileSync(`${file}${ext}`) : make());
      assets.set(rel, {
        type,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        cacheControl: rel.startsWith('assets/') ? IMMUTABLE : REVALIDATE,
        identity: body,
        br: made('.br', () => zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })),
        gzip: made('.gz', () => zlib.gzipSync(body, { level: 6 })),
      });
    }
  };
  walk('');
  return assets;
}

export function mountWebApp(app: TemplatedApp, options: WebAppOptions): { files: number } {
  const assets = loadWebApp(options.dir);
  const csp = contentSecurityPolicy(options.connectOrigins);
  const redirect = (res: HttpResponse): void => {
    res.writeStatus('302 Found').writeHeader('Location', WEB_APP_PATH).writeHeader('Cache-Control', 'no-cache').end();
  };
  app.get('/', redirect);
  app.get('/app', redirect);
  app.get(`${WEB_APP_PATH}*`, (res: HttpResponse, req: HttpRequest) => {
    let rel = req.getUrl().slice(WEB_APP_PATH.length);
    if (rel === '') rel = 'index.html';
    const ifNoneMatch = req.getHeader('if-none-match');
    const accept = req.getHeader('accept-encoding');
    if (assets === null) {
      res
        .writeStatus('503 Service Unavailable')
        .writeHeader('Content-Type', 'text/plain; charset=utf-8')
        .writeHeader('Cache-Control', 'no-store')
        .end('The web app is not built. Run `npm run build` (npm start does it), then restart the node.\n');
      return;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(rel);
    } catch {
      decoded = '';
    }
    const asset = assets.get(decoded);
    if (asset === undefined) {
      res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/plain; charset=utf-8').writeHeader('X-Content-Type-Options', 'nosniff').end('not found\n');
      return;
    }
    // uWS: the status line goes first, before any header.
    const notModified = ifNoneMatch === asset.etag;
    if (notModified) res.writeStatus('304 Not Modified');
    res.writeHeader('Content-Security-Policy', csp).writeHeader('X-Content-Type-Options', 'nosniff').writeHeader('Referrer-Policy', 'no-referrer');
    res.writeHeader('Cache-Control', asset.cacheControl).writeHeader('ETag', asset.etag).writeHeader('Vary', 'Accept-Encoding');
    if (notModified) {
      res.endWithoutBody(0);
      return;
    }
    const encoding = asset.br && /\bbr\b/.test(accept) ? 'br' : asset.gzip && /\bgzip\b/.test(accept) ? 'gzip' : null;
    res.writeHeader('Content-Type', asset.type);
    if (encoding !== null) res.writeHeader('Content-Encoding', encoding);
    res.end(encoding === 'br' ? (asset.br as Buffer) : encoding === 'gzip' ? (asset.gzip as Buffer) : asset.identity);
  });
  return { files: assets?.size ?? 0 };
}
