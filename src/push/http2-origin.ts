/**
 * One long-lived HTTP/2 session to one origin (APNs wants a connection kept open and reused,
 * not one per notification), with requests multiplexed on it.
 *
 * The session is opened on the first request and replaced when it ends: after a GOAWAY (the
 * server is going away or rotating connections; streams it did not process fail, later requests
 * go to a new session), an error, or a close. A request rejects on stream errors and when no
 * answer came within `timeoutMs` (its stream is cancelled); the caller decides what is
 * transient. `close` ends the session and refuses later requests.
 */
import http2 from 'node:http2';

export interface Http2Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

export interface Http2OriginOptions {
  ca?: string[];
  timeoutMs: number;
}

export class Http2Origin {
  private current: http2.ClientHttp2Session | null = null;
  private closed = false;
  /** Sessions opened so far (the tests watch reconnects). */
  connects = 0;

  constructor(
    readonly origin: string,
    private readonly o: Http2OriginOptions,
  ) {}

  request(headers: http2.OutgoingHttpHeaders, body: string): Promise<Http2Answer> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error('the HTTP/2 origin is closed'));
        return;
      }
      const stream = this.session().request({ ':method': 'POST', ...headers });
      const chunks: Buffer[] = [];
      let status = 0;
      let answer: http2.IncomingHttpHeaders = {};
      stream.setTimeout(this.o.timeoutMs, () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        reject(new Error(`no answer within ${this.o.timeoutMs} ms`));
      });
      stream.on('response', (h) => {
        answer = h;
        status = Number(h[':status'] ?? 0);
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve({ status, headers: answer, body: Buffer.concat(chunks).toString('utf8') }));
      stream.on('error', reject);
      stream.end(body);
    });
  }

  close(): void {
    this.closed = true;
    const s = this.current;
    this.current = null;
    if (s !== null && !s.destroyed) s.close();
  }

  private session(): http2.ClientHttp2Session {
    const live = this.current;
    if (live !== null && !live.closed && !live.destroyed) return live;
    const s = http2.connect(this.origin, this.o.ca ? { ca: this.o.ca } : {});
    this.connects += 1;
    const forget = (): void => {
      if (this.current === s) this.current = null;
    };
    s.on('goaway', forget);
    s.on('close', forget);
    // Its streams fail with the error too; the session itself is only dropped.
    s.on('error', forget);
    this.current = s;
    return s;
  }
}
