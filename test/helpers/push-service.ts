/**
 * A stand-in browser push service for tests: HTTPS with a self-signed certificate made with
 * `openssl` at start (the node trusts it through CHAT_PUSH_CA_FILE), which checks each push the
 * way a real push service and browser together would:
 *  - the VAPID JWT (RFC 8292): `Authorization: vapid t=<jwt>, k=<key>`, ES256, verified with the
 *    node's published VAPID public key; `aud` the endpoint's origin, `exp` within 24 h, `sub` set;
 *  - the payload (RFC 8291, `Content-Encoding: aes128gcm`), decrypted with the subscription's
 *    private key and auth secret (made here, as a browser makes them) by `http_ece`.
 * Each subscription's answer is scripted: 201 (default), any status (with a Retry-After, or
 * after a delay), or `hang` (never answers).
 */
import { selfSignedCert } from './push-tls.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { jwtVerify, importJWK } from 'jose';
import { after, before } from 'node:test';
import webpush from 'web-push';
import { WebPushSender } from '../../src/push/web-push-sender.ts';

interface Ece {
  decrypt(buffer: Buffer, params: { version: 'aes128gcm'; privateKey: crypto.ECDH; authSecret: string }): Buffer;
}
const ece = createRequire(import.meta.url)('http_ece') as Ece;

export interface TestSubscription {
  id: string;
  /** What the browser sends to the registration route (PushSubscription.toJSON()). */
  json: { endpoint: string; keys: { p256dh: string; auth: string } };
  ecdh: crypto.ECDH;
}

export interface ReceivedPush {
  subscription_id: string;
  /** The decrypted payload, parsed. */
  document: unknown;
  jwt: { aud: unknown; exp: unknown; sub: unknown };
  ttl: string | undefined;
  /** What the service answered. */
  status: number;
  /** When it was received (epoch ms). */
  at: number;
}

export type Answer = number | 'hang' | { status: number; retryAfter: string } | { status: number; delayMs: number };

export class StandInPushService {
  readonly received: ReceivedPush[] = [];
  /** Problems found in requests (bad JWT, undecryptable body); a test asserts it stays empty. */
  readonly problems: string[] = [];
  private readonly subs = new Map<string, TestSubscription>();
  private readonly answers = new Map<string, Answer[]>();
  private readonly sockets = new Set<Socket>();
  private readonly waiters: Array<() => void> = [];
  private vapidPublicKey = '';

  private constructor(
    private readonly server: https.Server,
    readonly origin: string,
    readonly caFile: string,
    private readonly dir: string,
  ) {
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res));
  }

  static async start(): Promise<StandInPushService> {
    const { dir, key, cert, caFile } = selfSignedCert('push-service');
    const server = https.createServer({ key, cert });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no address');
    return new StandInPushService(server, `https://127.0.0.1:${addr.port}`, caFile, dir);
  }

  /** The key the node publishes at GET /notifications/vapid-public-key. */
  trustVapidKey(publicKey: string): void {
    this.vapidPublicKey = publicKey;
  }

  /** A browser subscription: a fresh P-256 key pair and 16-byte auth secret. */
  subscribe(): TestSubscription {
    const id = crypto.randomUUID();
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.generateKeys();
    const sub: TestSubscription = {
      id,
      ecdh,
      json: { endpoint: `${this.origin}/push/${id}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') } },
    };
    this.subs.set(id, sub);
    return sub;
  }

  /** Scripts the next answers for a subscription (then 201 again). */
  answer(sub: TestSubscription, ...answers: Answer[]): void {
    this.answers.set(sub.id, answers);
  }

  for(sub: TestSubscription): ReceivedPush[] {
    return this.received.filter((r) => r.subscription_id === sub.id);
  }

  /** Resolves once `pred` holds over what was received; rejects after `ms`. */
  async waitFor(pred: () => boolean, ms = 10_000, what = 'push'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(this.received)}; problems: ${this.problems.join('; ')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const id = /^\/push\/([^/]+)$/.exec(req.url ?? '')?.[1] ?? '';
    const sub = this.subs.get(id);
    const scripted = this.answers.get(id);
    const answer: Answer = scripted !== undefined && scripted.length > 0 ? (scripted.shift() as Answer) : 201;
    if (answer === 'hang') return;
    if (req.method !== 'POST' || sub === undefined) {
      res.writeHead(404).end();
      return;
    }
    try {
      const jwt = await this.verifyVapid(req.headers.authorization ?? '');
      if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`Content-Encoding ${String(req.headers['content-encoding'])}`);
      const plain = ece.decrypt(body, { version: 'aes128gcm', privateKey: sub.ecdh, authSecret: sub.json.keys.auth });
      const status = typeof answer === 'number' ? answer : answer.status;
      this.received.push({ subscription_id: id, document: JSON.parse(plain.toString('utf8')), jwt, ttl: req.headers.ttl as string | undefined, status, at: Date.now() });
    } catch (err) {
      this.problems.push(`${id}: ${(err as Error).message}`);
      res.writeHead(400).end();
      this.wake();
      return;
    }
    if (typeof answer === 'number') res.writeHead(answer).end();
    else if ('delayMs' in answer) await new Promise((resolve) => setTimeout(resolve, answer.delayMs)).then(() => res.writeHead(answer.status).end());
    else res.writeHead(answer.status, { 'retry-after': answer.retryAfter }).end();
    this.wake();
  }

  private async verifyVapid(header: string): Promise<ReceivedPush['jwt']> {
    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header);
    if (!m) throw new Error(`Authorization is not "vapid t=..., k=...": ${header}`);
    const [, token, k] = m as unknown as [string, string, string];
    if (k !== this.vapidPublicKey) throw new Error('k is not the published VAPID public key');
    const raw = Buffer.from(this.vapidPublicKey, 'base64url');
    if (raw.length !== 65 || raw[0] !== 4) throw new Error('the published VAPID key is not an uncompressed P-256 point');
    const key = await importJWK({ kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') }, 'ES256');
    const { payload, protectedHeader } = await jwtVerify(token, key, { algorithms: ['ES256'], audience: this.origin });
    if (protectedHeader.alg !== 'ES256') throw new Error('alg');
    const exp = payload.exp ?? 0;
    if (exp > Date.now() / 1000 + 24 * 3600 + 60) throw new Error('exp more than 24 h ahead');
    if (typeof payload.sub !== 'string' || !/^(mailto:|https:)/.test(payload.sub)) throw new Error('sub missing');
    return { aud: payload.aud, exp: payload.exp, sub: payload.sub };
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/**
 * A stand-in push service for the tests of one file or suite (node:test before/after hooks where
 * this is called), trusting a VAPID key made for them: `sender()` is a WebPushSender with that key
 * and the service's CA, `of` the pushes a subscription got for one message.
 */
export function useStandInPush(): {
  readonly push: StandInPushService;
  vapid: { publicKey: string; privateKey: string; subject: string };
  sender(): WebPushSender;
  of(message_id: string, sub: TestSubscription): ReceivedPush[];
} {
  const vapid = { ...webpush.generateVAPIDKeys(), subject: 'mailto:ops@example.com' };
  let push: StandInPushService | undefined;
  before(async () => {
    push = await StandInPushService.start();
    push.trustVapidKey(vapid.publicKey);
  });
  after(async () => {
    await push?.stop();
  });
  const kit = {
    get push(): StandInPushService {
      if (push === undefined) throw new Error('the stand-in push service is not started yet (use it inside a test)');
      return push;
    },
    vapid,
    sender: () => new WebPushSender(vapid, { timeoutMs: 1500, caFile: kit.push.caFile }),
    of: (message_id: string, sub: TestSubscription): ReceivedPush[] =>
      kit.push.for(sub).filter((r) => (r.document as { data: { message_id: string } }).data.message_id === message_id),
  };
  return kit;
}
