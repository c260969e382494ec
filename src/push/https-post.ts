/**
 * One HTTPS POST with a whole-request timeout, answering status, headers and the body as text
 * (push service answers are small JSON). Network errors, TLS failures and timeouts reject with
 * the underlying error; the caller decides what is transient.
 */
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';

export interface HttpsAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Answers larger than this are cut (an error page, never a push service's JSON). */
const MAX_ANSWER_BYTES = 64 * 1024;

export function httpsPost(url: string, headers: Record<string, string>, body: string, agent: https.Agent, timeoutMs: number): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(body, 'utf8');
    const req = https.request(url, { method: 'POST', agent, headers: Object.assign({}, headers, { 'content-length': String(payload.length) }) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_ANSWER_BYTES) chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(payload);
  });
}

/** The answer's JSON object, or {} when it is not one. */
export function safeJson(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
