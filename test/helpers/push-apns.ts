/**
 * A stand-in APNs for tests: HTTP/2 over TLS (node:http2 createSecureServer with the
 * openssl-made certificate of helpers/push-tls.ts), checking what Apple would:
 *  - `:method POST`, `:path /3/device/<token>`;
 *  - `authorization: bearer <provider token>`: an ES256 JWT verified with the public key of the
 *    .p8 key made here (`keyFile`), `kid` the key id, `iss` the team id, `iat` within the hour;
 *  - `apns-topic` the bundle id, `apns-push-type: alert`, `apns-priority: 10`;
 *  - the payload `{aps: {alert: {title, body}, sound}, ...custom keys}`.
 * Each device token's answers are scripted (then 200): a status with an APNs reason,
 * optionally a Retry-After, or `hang`. `goaway()` sends GOAWAY on every open session, as APNs
 * does when it rotates connections.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { selfSignedCert, waitUntil, type TestCert } from './push-tls.ts';

export type ApnsAnswer = 200 | 'hang' | { status: number; reason: string; retryAfter?: string };

export interface ReceivedApns {
  token: string;
  headers: http2.IncomingHttpHeaders;
  payload: Record<string, unknown>;
  jwt: string;
  status: number;
  at: number;
}

export class StandInApns {
  readonly received: ReceivedApns[] = [];
  readonly problems: string[] = [];
  readonly keyId = 'ABC123DEFG';
  readonly teamId = 'TEAM123456';
  readonly topic = 'com.example.chat';
  readonly keyFile: string;
  /** TLS sessions accepted so far. */
  sessionsOpened = 0;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly answers = new Map<string, ApnsAnswer[]>();
  private readonly publicKey: crypto.KeyObject;

  private constructor(
    private readonly server: http2.Http2SecureServer,
    readonly origin: string,
    private readonly tls: TestCert,
  ) {
    const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    this.publicKey = publicKey;
    this.keyFile = path.join(tls.dir, `AuthKey_${this.keyId}.p8`);
    fs.writeFileSync(this.keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    server.on('session', (s: http2.ServerHttp2Session) => {
      this.sessionsOpened += 1;
      this.sessions.add(s);
      s.on('close', () => this.sessions.delete(s));
      s.on('error', () => undefined);
    });
    server.on('stream', (stream, headers) => void this.handle(stream, headers));
  }

  static async start(): Promise<StandInApns> {
    const tls = selfSignedCert('apns-standin');
    const server = http2.createSecureServer({ key: tls.key, cert: tls.cert });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no address');
    return new StandInApns(server, `https://127.0.0.1:${addr.port}`, tls);
  }

  get caFile(): string {
    return this.tls.caFile;
  }

  answer(token: string, ...answers: ApnsAnswer[]): void {
    this.answers.set(token, answers);
  }

  to(token: string): ReceivedApns[] {
    return this.received.filter((r) => r.token === token);
  }

  waitFor(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
    return waitUntil(pred, () => `${what}; received: ${JSON.stringify(this.received.map((r) => ({ token: r.token, status: r.status })))}; problems: ${this.problems.join('; ')}`, ms);
  }

  /** GOAWAY on every open session (no stream processed after it). */
  goaway(): void {
    for (const s of this.sessions) s.goaway(http2.constants.NGHTTP2_NO_ERROR);
  }

  async stop(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.tls.dir, { recursive: true, force: true });
  }

  private async handle(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): Promise<void> {
    stream.on('error', () => undefined);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    const token = /^\/3\/device\/([^/?]+)$/.exec(String(headers[':path']))?.[1] ?? '';
    const jwt = /^bearer (\S+)$/.exec(String(headers.authorization))?.[1] ?? '';
    let payload: Record<string, unknown>;
    try {
      if (headers[':method'] !== 'POST' || token === '') throw new Error(`${headers[':method']} ${headers[':path']}`);
      await this.verifyProviderToken(jwt);
      if (headers['apns-topic'] !== this.topic) throw new Error(`apns-topic ${headers['apns-topic']}`);
      if (headers['apns-push-type'] !== 'alert') throw new Error(`apns-push-type ${headers['apns-push-type']}`);
      if (headers['apns-priority'] !== '10') throw new Error(`apns-priority ${headers['apns-priority']}`);
      payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const aps = payload.aps as { alert?: { title?: unknown; body?: unknown } } | undefined;
      if (typeof aps?.alert?.title !== 'string' || typeof aps.alert.body !== 'string') throw new Error('aps.alert');
    } catch (err) {
      this.problems.push(`${token}: ${(err as Error).message}`);
      reply(stream, 403, { reason: 'InvalidProviderToken' });
      return;
    }
    const answer = this.answers.get(token)?.shift() ?? 200;
    if (answer === 'hang') return;
    this.received.push({ token, headers, payload, jwt, status: answer === 200 ? 200 : answer.status, at: Date.now() });
    if (answer === 200) {
      stream.respond({ ':status': 200, 'apns-id': crypto.randomUUID() });
      stream.end();
    } else {
      reply(stream, answer.status, { reason: answer.reason, ...(answer.status === 410 ? { timestamp: Date.now() } : {}) }, answer.retryAfter);
    }
  }

  private async verifyProviderToken(jwt: string): Promise<void> {
    if (decodeProtectedHeader(jwt).kid !== this.keyId) throw new Error('kid is not the key id');
    const { payload } = await jwtVerify(jwt, this.publicKey, { algorithms: ['ES256'], issuer: this.teamId });
    const age = Date.now() / 1000 - (payload.iat ?? 0);
    if (payload.iat === undefined || age > 3600 || age < -60) throw new Error('iat not within the hour');
  }
}

function reply(stream: http2.ServerHttp2Stream, status: number, body: Record<string, unknown>, retryAfter?: string): void {
  stream.respond({ ':status': status, 'content-type': 'application/json', ...(retryAfter !== undefined ? { 'retry-after': retryAfter } : {}) });
  stream.end(JSON.stringify(body));
}
