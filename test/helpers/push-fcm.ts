/**
 * A stand-in FCM for tests, over HTTPS (helpers/push-tls.ts), checking what Google would:
 *  - POST /token: the RFC 7523 JWT bearer grant, its RS256 signature verified with the public
 *    key of the service account made here (`serviceAccountFile`); `iss` the client email, `aud`
 *    the token URI, the firebase.messaging scope, `kid` the key id, at most an hour long.
 *    Answers an access token (expires_in one hour).
 *  - POST /v1/projects/<project>/messages:send: a bearer token it issued; the message shape
 *    `{message: {token, notification: {title, body}, data: {string values}, android: {priority}}}`.
 *    Each device token's answers are scripted (then 200): a status, `unregistered` (404
 *    UNREGISTERED), `invalid-token` (400 INVALID_ARGUMENT on message.token), or `hang`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Socket } from 'node:net';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { selfSignedCert, waitUntil, type TestCert } from './push-tls.ts';

export type FcmAnswer = number | 'unregistered' | 'invalid-token' | 'hang' | { status: number; retryAfter: string };

export interface ReceivedFcm {
  token: string;
  /** The request body, parsed. */
  body: { message?: Record<string, unknown> };
  status: number;
  at: number;
}

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

export class StandInFcm {
  readonly received: ReceivedFcm[] = [];
  readonly problems: string[] = [];
  /** Access tokens issued (one per grant). */
  readonly issued = new Set<string>();
  readonly projectId = 'chat-test';
  readonly clientEmail = 'push@chat-test.iam.gserviceaccount.com';
  readonly keyId = crypto.randomBytes(20).toString('hex');
  readonly serviceAccountFile: string;
  private readonly answers = new Map<string, FcmAnswer[]>();
  private readonly sockets = new Set<Socket>();
  private readonly publicKey: crypto.KeyObject;

  private constructor(
    private readonly server: https.Server,
    readonly origin: string,
    private readonly tls: TestCert,
  ) {
    const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey;
    this.serviceAccountFile = path.join(tls.dir, 'service-account.json');
    fs.writeFileSync(this.serviceAccountFile, JSON.stringify({
      type: 'service_account', project_id: this.projectId, private_key_id: this.keyId,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), client_email: this.clientEmail,
      token_uri: this.tokenUri,
    }));
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res));
  }

  static async start(): Promise<StandInFcm> {
    const tls = selfSignedCert('fcm-standin');
    const server = https.createServer({ key: tls.key, cert: tls.cert });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no address');
    return new StandInFcm(server, `https://127.0.0.1:${addr.port}`, tls);
  }

  get caFile(): string {
    return this.tls.caFile;
  }

  get tokenUri(): string {
    return `${this.origin}/token`;
  }

  answer(token: string, ...answers: FcmAnswer[]): void {
    this.answers.set(token, answers);
  }

  to(token: string): ReceivedFcm[] {
    return this.received.filter((r) => r.token === token);
  }

  waitFor(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
    return waitUntil(pred, () => `${what}; received: ${JSON.stringify(this.received)}; problems: ${this.problems.join('; ')}`, ms);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.tls.dir, { recursive: true, force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (req.method === 'POST' && req.url === '/token') return this.grant(text, res);
    if (req.method === 'POST' && req.url === `/v1/projects/${this.projectId}/messages:send`) return this.send(req, text, res);
    this.problems.push(`unexpected ${req.method} ${req.url}`);
    res.writeHead(404).end();
  }

  private async grant(text: string, res: ServerResponse): Promise<void> {
    try {
      const form = new URLSearchParams(text);
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw new Error(`grant_type ${form.get('grant_type')}`);
      const assertion = form.get('assertion') ?? '';
      if (decodeProtectedHeader(assertion).kid !== this.keyId) throw new Error('kid is not the key id');
      const { payload } = await jwtVerify(assertion, this.publicKey, { algorithms: ['RS256'], issuer: this.clientEmail, audience: this.tokenUri });
      if (payload.scope !== SCOPE) throw new Error(`scope ${String(payload.scope)}`);
      if (payload.iat === undefined || payload.exp === undefined || payload.exp - payload.iat > 3600) throw new Error('iat/exp');
    } catch (err) {
      this.problems.push(`token grant: ${(err as Error).message}`);
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
      return;
    }
    const token = `ya29.${crypto.randomBytes(24).toString('base64url')}`;
    this.issued.add(token);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }));
  }

  private send(req: IncomingMessage, text: string, res: ServerResponse): void {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer === undefined || !this.issued.has(bearer)) {
      this.problems.push(`messages:send without an issued bearer token: ${req.headers.authorization}`);
      fcmError(res, 401, 'UNAUTHENTICATED', 'THIRD_PARTY_AUTH_ERROR');
      return;
    }
    let body: ReceivedFcm['body'];
    try {
      body = JSON.parse(text) as ReceivedFcm['body'];
      checkShape(body);
    } catch (err) {
      this.problems.push(`messages:send body: ${(err as Error).message}`);
      fcmError(res, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
      return;
    }
    const token = String(body.message?.token);
    const answer = this.answers.get(token)?.shift() ?? 200;
    if (answer === 'hang') return;
    const status = answer === 'unregistered' ? 404 : answer === 'invalid-token' ? 400 : typeof answer === 'number' ? answer : answer.status;
    this.received.push({ token, body, status, at: Date.now() });
    if (answer === 'unregistered') fcmError(res, 404, 'NOT_FOUND', 'UNREGISTERED');
    else if (answer === 'invalid-token') fcmError(res, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'message.token');
    else if (typeof answer === 'object') fcmError(res, answer.status, 'UNAVAILABLE', 'QUOTA_EXCEEDED', undefined, answer.retryAfter);
    else if (status === 200) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: `projects/${this.projectId}/messages/${crypto.randomUUID()}` }));
    else fcmError(res, status, 'UNAVAILABLE', 'UNAVAILABLE');
  }
}

function fcmError(res: ServerResponse, code: number, status: string, errorCode: string, field?: string, retryAfter?: string): void {
  const details: unknown[] = [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode }];
  if (field !== undefined) details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description: 'Invalid registration token' }] });
  res.writeHead(code, { 'content-type': 'application/json', ...(retryAfter !== undefined ? { 'retry-after': retryAfter } : {}) });
  res.end(JSON.stringify({ error: { code, message: 'scripted', status, details } }));
}

/** The fields FCM v1 accepts as the sender uses them (FCM answers 400 to unknown fields). */
function checkShape(body: ReceivedFcm['body']): void {
  const m = body.message;
  if (typeof m !== 'object' || m === null) throw new Error('no message');
  const keys = Object.keys(m).sort().join(',');
  if (keys !== 'android,data,notification,token') throw new Error(`message fields ${keys}`);
  if (typeof m.token !== 'string' || m.token === '') throw new Error('token');
  const n = m.notification as Record<string, unknown>;
  if (Object.keys(n).sort().join(',') !== 'body,title' || typeof n.title !== 'string' || typeof n.body !== 'string') throw new Error('notification');
  for (const v of Object.values(m.data as Record<string, unknown>)) if (typeof v !== 'string') throw new Error('a data value is not a string');
  if ((m.android as Record<string, unknown>).priority !== 'high') throw new Error('android.priority');
}
