/**
 * Request bodies: read up to a hard limit, never buffering past it.
 *
 * - A declared Content-Length over the limit is refused before a byte is kept.
 * - Without a declared length (chunked), bytes are counted as they arrive; the moment the limit is
 *   passed the reader stops keeping chunks and reports `payload_too_large`.
 * - A refused body is still read, and thrown away, while the answer goes out: see linger.ts.
 * - uWS reuses the ArrayBuffer it hands to onData, so each chunk is copied before it is kept.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { ApiError } from '../errors/catalog.ts';

export function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `the request body exceeds ${Math.floor(limit / 1024)} kB`);
}

/**
 * Reads a request's body from the uWS callback on (uWS wants onData attached there). `keep`: the
 * route takes a body, kept up to `limit`; otherwise bytes are only counted (a body on a route that
 * takes none, or a refused one). Either way `promise` rejects with `payload_too_large` once more
 * than `limit` bytes arrived, and the reader keeps counting to the end.
 */
export class BodyReader {
  /** Bytes that arrived so far, kept or not. */
  received = 0;
  /** The body's last byte arrived. */
  finished = false;
  readonly promise: Promise<Buffer>;
  private readonly chunks: Buffer[] = [];
  private over = false;
  private watcher: (() => void) | null = null;

  constructor(res: HttpResponse, limit: number, keep: boolean) {
    let resolve: (b: Buffer) => void = () => {};
    let reject: (e: unknown) => void = () => {};
    this.promise = new Promise<Buffer>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    // Keep a refused or over-limit body from surfacing as an unhandled rejection while the
    // request waits on something else; the edge reads `promise` when it gets there.
    this.promise.catch(() => undefined);
    res.onData((ab, isLast) => {
      this.received += ab.byteLength;
      if (isLast) this.finished = true;
      if (!this.over) {
        if (this.received > limit) {
          this.over = true;
          this.chunks.length = 0;
          reject(tooLarge(limit));
        } else {
          if (keep && ab.byteLength > 0) this.chunks.push(Buffer.from(ab.slice(0)));
          if (isLast) resolve(this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.received));
        }
      }
      this.watcher?.();
    });
  }

  /** Calls `f` after every chunk from now on (the last one included). */
  watch(f: () => void): void {
    this.watcher = f;
  }
}

/** The body kept up to `limit` (`payload_too_large` past it). */
export function readBody(res: HttpResponse, limit: number): Promise<Buffer> {
  return new BodyReader(res, limit, true).promise;
}

/** `application/json`, optionally with parameters such as charset=utf-8. */
export function isJsonContentType(value: string): boolean {
  const type = value.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json' || (type !== undefined && /^application\/[a-z0-9.+-]+\+json$/.test(type));
}

export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_json', `the request body is not valid JSON: ${(err as Error).message}`);
  }
}
