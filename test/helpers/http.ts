/** A small HTTP client over node:http (no connection reuse), for precise control in edge tests. */
import http from 'node:http';

export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; chunks?: Buffer[] } = {},
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.chunks) {
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else {
      req.end(opts.body);
    }
  });
}

export const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

export function assertErrorBody(res: Res, status: number, code: string, path?: string): Record<string, unknown> {
  const body = res.json() as Record<string, unknown>;
  const problems: string[] = [];
  if (res.status !== status) problems.push(`status ${res.status} != ${status}`);
  if (body.status_code !== status) problems.push(`status_code ${String(body.status_code)} != ${status}`);
  if (body.error !== code) problems.push(`error ${String(body.error)} != ${code}`);
  if (!(typeof body.message === 'string' || Array.isArray(body.message))) problems.push('message not string/array');
  if (typeof body.path !== 'string' || body.path.includes('?')) problems.push(`bad path ${String(body.path)}`);
  if (path !== undefined && body.path !== path) problems.push(`path ${String(body.path)} != ${path}`);
  if (typeof body.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp))) problems.push('bad timestamp');
  if (Object.keys(body).sort().join() !== 'error,message,path,status_code,timestamp') problems.push(`extra fields ${Object.keys(body).join()}`);
  if (problems.length) throw new Error(`${problems.join('; ')}\nbody: ${res.text}`);
  return body;
}
