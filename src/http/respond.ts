/**
 * Writing responses on uWebSockets.js. Every response goes through `send`, which corks (needed
 * after an await, harmless inside the request callback) and skips aborted requests. Error bodies
 * are rendered only here, from `ApiError`, in the contract's shape.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { ApiError, errorBody } from '../errors/catalog.ts';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  414: '414 URI Too Long',
  415: '415 Unsupported Media Type',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export function statusLine(status: number): string {
  return STATUS_TEXT[status] ?? `${status} Status`;
}

/** Per-request response state shared by the edge's steps. */
export interface Exchange {
  res: HttpResponse;
  aborted: boolean;
  done: boolean;
  /** Headers added to whatever response is sent (request id, CORS, rate limit). */
  headers: Record<string, string>;
  /** Set by `send`, read for metrics and logs. */
  status: number;
  /** True while still inside the uWS request callback, where uWS has already corked the socket. */
  inCallback?: boolean;
}

export function send(ex: Exchange, status: number, body: string | Buffer | null, extra?: Record<string, string>, closeConnection = false): void {
  if (ex.aborted || ex.done) return;
  ex.done = true;
  ex.status = status;
  const write = (): void => {
    const { res } = ex;
    if (status !== 200) res.writeStatus(statusLine(status)); // uWS answers 200 OK by default
    for (const k in ex.headers) res.writeHeader(k, ex.headers[k] as string);
    if (extra) for (const k in extra) res.writeHeader(k, extra[k] as string);
    if (body === null) {
      res.endWithoutBody(0, closeConnection);
    } else {
      res.writeHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(body, closeConnection);
    }
  };
  if (ex.inCallback) write();
  else ex.res.cork(write);
}

export function sendJson(ex: Exchange, status: number, value: unknown, extra?: Record<string, string>): void {
  send(ex, status, status === 204 ? null : JSON.stringify(value), extra);
}

export function sendError(ex: Exchange, err: ApiError, path: string, closeConnection = false): void {
  send(ex, err.status, JSON.stringify(errorBody(err, path)), err.headers, closeConnection);
}
