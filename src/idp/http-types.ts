/**
 * The IdP's HTTP vocabulary, independent of any server library: the embedded IdP runs inside the
 * chat node's uWebSockets.js app, the standalone one in its own; tests can call the handler
 * directly.
 */
export interface IdpHttpRequest {
  method: string;
  /** Path relative to the IdP mount, starting with `/`, without the query string. */
  path: string;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface IdpHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdpHandler = (req: IdpHttpRequest) => Promise<IdpHttpResponse>;

/** Bodies of IdP requests are small forms; anything larger is refused with 413. */
export const IDP_MAX_BODY_BYTES = 64 * 1024;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): IdpHttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
