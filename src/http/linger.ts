/**
 * Answers after which the connection must close, delivered so the client reads them.
 *
 * Closing a connection whose receive buffer still holds unread bytes makes the kernel send a
 * reset; a client still uploading then gets EPIPE or ECONNRESET, and may never read the 413 that
 * was already on its way (4 tries in 5 with a 4 MB body, before this). So, as nginx's lingering
 * close does (answerAndLinger): the answer goes out at once, with `Connection: close`; the node
 * keeps reading and throwing away what the client still sends; it closes when the body is complete
 * (nothing left unread: a clean close), when the client closes first (conforming clients stop on
 * the early answer, RFC 9112 §9.5), or when LINGER_BYTES more bytes or LINGER_MS have passed.
 *
 * A request whose framing is invalid (answerAndClose) must not be followed by anything uWS would
 * parse as a next request: that is the smuggled request. uWS parses every complete request of a
 * read before the callbacks' answers are flushed, and it forgets an ended response's "close" when
 * it starts the next request. A response that is still open makes uWS close the connection
 * instead of starting a next request. So the answer leaves the response open, and the connection
 * is closed once the answer is flushed; if a complete request followed in the same read, uWS
 * closes at once and that request never runs (nor is the answer sent).
 *
 * Leaving the response open: uWS.js invalidates a response object once it ended, so it could not
 * be closed later. The answer is therefore written as the response's head: status, headers, and,
 * in the last header's value, the blank line and the JSON body. uWS ends every header line with
 * CRLF; those two bytes are counted in Content-Length as part of the body (JSON allows trailing
 * whitespace).
 */
import { ApiError, errorBody } from '../errors/catalog.ts';
import type { BodyReader } from './body.ts';
import { sendError, statusLine, type Exchange } from './respond.ts';

/** Bytes read and thrown away after the answer, at most. */
export const LINGER_BYTES = 16 * 1024 * 1024;
/** How long the connection stays open after the answer, at most. */
export const LINGER_MS = 10_000;

/** Connections lingering now (the tests check none is left behind). */
export const lingering = { now: 0 };

/** Writes `err` as a complete response while leaving uWS's response open; false if it could not. */
function writeOpen(ex: Exchange, err: ApiError, path: string): boolean {
  if (ex.aborted || ex.done) return false;
  ex.done = true;
  ex.status = err.status;
  const { res } = ex;
  const json = JSON.stringify(errorBody(err, path));
  const write = (): void => {
    res.writeStatus(statusLine(err.status));
    for (const k in ex.headers) res.writeHeader(k, ex.headers[k] as string);
    for (const k in err.headers) res.writeHeader(k, err.headers[k] as string);
    res.writeHeader('Content-Type', 'application/json; charset=utf-8');
    res.writeHeader('Connection', 'close');
    res.writeHeader('Content-Length', `${Buffer.byteLength(json) + 2}\r\n\r\n${json}`);
  };
  if (ex.inCallback) write();
  else res.cork(write);
  return true;
}

/**
 * A closer for an open response: closes once (never from inside uWS's data callback, where the
 * socket is corked and closing would drop the answer still in the cork buffer; uWS flushes it when
 * that callback returns), and notes a close by the client.
 */
function closer(ex: Exchange, onClose: () => void): () => void {
  let open = true;
  const close = (): void => {
    if (!open) return;
    open = false;
    onClose();
    if (!ex.aborted) ex.res.close();
  };
  ex.res.onAborted(() => {
    ex.aborted = true;
    close();
  });
  return () => setImmediate(close);
}

/** Answers `err` (invalid framing) and closes the connection, parsing nothing after the request. */
export function answerAndClose(ex: Exchange, err: ApiError, path: string): void {
  if (!writeOpen(ex, err, path)) return;
  closer(ex, () => undefined)();
}

/** Answers `err` at once and closes once the client has sent its body (see above). */
export function answerAndLinger(ex: Exchange, err: ApiError, path: string, body: BodyReader | null): void {
  if (body === null || body.finished) {
    // Nothing more is coming: answer and close as usual.
    sendError(ex, err, path, true);
    return;
  }
  if (!writeOpen(ex, err, path)) return;
  lingering.now++;
  const timer = setTimeout(() => close(), LINGER_MS);
  timer.unref();
  const close = closer(ex, () => {
    lingering.now--;
    clearTimeout(timer);
  });
  const start = body.received;
  body.watch(() => {
    if (body.finished || body.received - start > LINGER_BYTES) close();
  });
}
