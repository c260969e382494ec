/**
 * HTTP/1.1 over a raw socket, for framing tests: the request is written as given, in pieces with
 * pauses between them (so each piece is its own TCP segment and the server reads it on its own),
 * and the outcome says whether an answer came, and whether the server closed or held the
 * connection without one.
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawOutcome {
  /** The first complete response, or null when none came. */
  response: RawResponse | null;
  /** The server closed the connection (after the response, or without one). */
  closed: boolean;
  /** Nothing more happened within the wait: the connection was held. */
  timedOut: boolean;
  /** A socket error (EPIPE, ECONNRESET), if one happened. */
  error: string | null;
  /** Everything received, for messages. */
  raw: string;
}

export interface RawOptions {
  /** Pause between pieces (default 15 ms). */
  gapMs?: number;
  /** How long to wait for the outcome after the last piece (default 2000 ms). */
  waitMs?: number;
  /** Resolve as soon as a complete response is in, without waiting for the close (default false). */
  stopAtResponse?: boolean;
}

/** Splits `text` into pieces of `size` bytes. */
export function pieces(text: string | Buffer, size: number): Buffer[] {
  const buf = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

/** Parses the first complete response of `data` (Content-Length or chunked framing), or null. */
export function parseResponse(data: Buffer): RawResponse | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = data.subarray(end + 4);
  if (status === 100) return parseResponse(rest);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) return null;
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (rest.length < lineEnd + 2 + size + 2) return null;
      if (size === 0) break;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    return { status, headers, body: Buffer.concat(parts).toString('utf8') };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (rest.length < length) return null;
  return { status, headers, body: rest.subarray(0, length).toString('utf8') };
}

/** Writes `parts` to 127.0.0.1:`port` one by one and reports what the server did. */
export function rawExchange(port: number, parts: Array<string | Buffer>, opts: RawOptions = {}): Promise<RawOutcome> {
  const gapMs = opts.gapMs ?? 15;
  const waitMs = opts.waitMs ?? 2000;
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const chunks: Buffer[] = [];
    let closed = false;
    let error: string | null = null;
    let settled = false;
    let timer: NodeJS.Timeout | null = null;
    const settle = (timedOut: boolean): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      const data = Buffer.concat(chunks);
      socket.destroy();
      resolve({ response: parseResponse(data), closed, timedOut, error, raw: data.toString('latin1') });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (opts.stopAtResponse && parseResponse(Buffer.concat(chunks)) !== null) settle(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on('close', () => {
      closed = true;
      settle(false);
    });
    socket.on('connect', async () => {
      for (const p of parts) {
        if (settled || socket.destroyed) return;
        socket.write(typeof p === 'string' ? Buffer.from(p, 'latin1') : p);
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      }
      timer = setTimeout(() => settle(true), waitMs);
    });
  });
}

/**
 * Sends `head`, then `bodyBytes` bytes of `fill` as fast as the socket takes them (honouring
 * backpressure), reading all the while, as an HTTP client that uploads a large body does; with
 * `chunked`, the body goes out in chunked framing. Stops writing at the first socket error or
 * close. The outcome is whatever response arrived in the end. `readAfterSending`: the client reads
 * nothing until it has sent the whole body (or failed to), as simple clients do; what the server
 * sent meanwhile waits in the kernel, and a reset from the server discards it.
 */
export function rawUpload(
  port: number,
  head: string,
  bodyBytes: number,
  opts: { chunked?: boolean; piece?: number; waitMs?: number; readAfterSending?: boolean } = {},
): Promise<RawOutcome & { sent: number }> {
  const piece = opts.piece ?? 64 * 1024;
  const block = Buffer.alloc(piece, 0x20);
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    let error: string | null = null;
    let sent = 0;
    let settled = false;
    const settle = (timedOut: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const data = Buffer.concat(chunks);
      socket.destroy();
      resolve({ response: parseResponse(data), closed, timedOut, error, raw: data.toString('latin1').slice(0, 2000), sent });
    };
    const timer = setTimeout(() => settle(true), opts.waitMs ?? 10_000);
    socket.on('data', (d: Buffer) => chunks.push(d));
    if (opts.readAfterSending) socket.pause();
    const sendingDone = (): void => {
      if (opts.readAfterSending) setTimeout(() => socket.resume(), 50);
    };
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    socket.on('close', () => {
      closed = true;
      settle(false);
    });
    const pump = (): void => {
      if (sent >= bodyBytes || socket.destroyed || error !== null) return sendingDone();
      while (sent < bodyBytes && !socket.destroyed && error === null) {
        const n = Math.min(piece, bodyBytes - sent);
        const data = n === piece ? block : block.subarray(0, n);
        const framed = opts.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
        sent += n;
        const more = socket.write(framed, () => undefined);
        if (sent >= bodyBytes && opts.chunked) socket.write('0\r\n\r\n', () => undefined);
        if (!more) {
          socket.once('drain', pump);
          return;
        }
      }
      sendingDone();
    };
    socket.on('error', sendingDone);
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
  });
}
