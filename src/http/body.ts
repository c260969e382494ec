/**
 * Request bodies: read up to a hard limit, never buffering past it.
 *
 * - A declared Content-Length over the limit is refused before a byte is read.
 * - Without a declared length (chunked), bytes are counted as they arrive; the moment the limit is
 *   passed the reader stops keeping chunks and reports `payload_too_large`. The edge then answers
 *   and closes the connection, since the rest of the body will not be read.
 * - uWS reuses the ArrayBuffer it hands to onData, so each chunk is copied before it is kept.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { ApiError } from '../errors/catalog.ts';

export function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `the request body exceeds ${Math.floor(limit / 1024)} kB`);
}

export function readBody(res: HttpResponse, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    res.onData((ab, isLast) => {
      if (over) return;
      size += ab.byteLength;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        reject(tooLarge(limit));
        return;
      }
      if (ab.byteLength > 0) chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
  });
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
