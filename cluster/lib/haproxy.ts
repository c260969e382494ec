/**
 * The load balancer's configuration (HAProxy 2.6, from the distribution), and `haproxy -c`.
 *
 * Choices, each for a reason:
 * - roundrobin: any node serves any request (the edge forwards to the conversation's owner), so
 *   spreading connections evenly is all the balancer has to do.
 * - health check on /readyz every second: a draining node answers 503 at once and is out of
 *   rotation within ~1 s, before its listener closes; `rise 1` brings a restarted node back
 *   after one good check.
 * - keep-alive to clients and to nodes (HAProxy's default mode; `http-server-close` is not set):
 *   a new TCP connection per request would cost more than the request.
 * - long client/server timeouts: they are inactivity timeouts, and a realtime (SSE) stream is
 *   silent between events but for the node's `: ka` lines (every 15 s by default); 5 min leaves
 *   ample margin. `timeout tunnel` covers upgraded connections the same way.
 * - `retries` + `redispatch 1`: a connection refused by a node that just closed its listener is
 *   retried at once on another node (the request was never sent, so nothing runs twice).
 * - After a response, only GET/HEAD are retried (an empty response, or the 503 a draining node
 *   answers on a kept-alive connection): HAProxy cannot tell that 503 (nothing ran) from one
 *   after which a write may have happened, so a POST's 503 (`Retry-After: 1`) goes back to the
 *   client to decide.
 * - Header sections up to 31 KB (`tune.bufsize 32768`, less HAProxy's 1 KB rewrite reserve), in
 *   any number of packets: HAProxy reads the whole section before it forwards it, in one write.
 *   The node takes 32 KB in any number of reads (docs/http.md); tokens of identity providers reach
 *   4-8 KB.
 * - What the node's HTTP parser (uWebSockets) would close or hold without an answer is answered
 *   here with the contract's error body (REFUSALS): more header fields than the node takes (431),
 *   a header name outside [A-Za-z0-9-] or a control character in a value, HTTP/1.0, no Host, a
 *   request target that is not a path (400). An absolute-form target becomes its path. HAProxy
 *   itself refuses conflicting Content-Length headers and header sections past its buffer with its
 *   own 400 page: HAProxy 2.6 does not let a configuration replace the answers of its parser.
 * - A 503 of HAProxy's own (no node up) carries the contract's body and `Retry-After: 1`.
 * - `/idp/` goes to the identity provider (when there is one to route to), path unchanged: it
 *   serves under `/idp` with the balancer's URL as its issuer, so the token commands that work
 *   against a single node (whose embedded IdP lives at `/idp`) work against the balancer as is.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { installHint } from './tools.ts';
import { ERROR_STATUS, type ErrorCode } from '../../src/errors/catalog.ts';

/**
 * Header fields a client may send: the node's parser takes 48 (uWebSockets' MAX_HEADERS of 50,
 * less the request line and its end marker), and HAProxy adds X-Forwarded-For.
 */
export const MAX_CLIENT_HEADER_FIELDS = 47;

/** HAProxy's buffer: the largest header section it forwards is this less its 1 KB rewrite reserve. */
export const HAPROXY_BUFSIZE = 32768;

/** A header name with a character other than letters, digits and '-', or a control character (but TAB) in a value. */
const BAD_HEADER_BYTES = String.raw`(^|\n)[-a-zA-Z0-9]*[^-a-zA-Z0-9:\r]|[\x00-\x08\x0b\x0c\x0e-\x1f]`;

/**
 * The contract's error body as a HAProxy log-format string: `path` and `timestamp` are filled in
 * per request (ISO-8601 UTC with milliseconds).
 */
export function haproxyErrorBody(code: ErrorCode, message: string): string {
  if (/['"\\%]/.test(message)) throw new Error(`haproxy error message must not need escaping: ${message}`);
  const status = ERROR_STATUS[code];
  return `{"status_code":${status},"error":"${code}","message":"${message}","path":"%[path,json(utf8s)]","timestamp":"%[date,utime(%Y-%m-%dT%H:%M:%S)].%[date(0,ms),mod(1000),add(1000),lower,bytes(1,3)]Z"}`;
}

const JSON_TYPE = 'content-type "application/json; charset=utf-8"';

/** `http-request return` of the contract's error body, when `condition` holds. */
function refusal(code: ErrorCode, message: string, condition: string): string {
  return `    http-request return status ${ERROR_STATUS[code]} ${JSON_TYPE} lf-string '${haproxyErrorBody(code, message)}' if ${condition}`;
}

/** Requests the node's parser would close or hold unanswered, answered by HAProxy (first match wins). */
const REFUSALS = [
  refusal('header_fields_too_large', `the request has more than ${MAX_CLIENT_HEADER_FIELDS} header fields`, `{ req.fhdr_cnt gt ${MAX_CLIENT_HEADER_FIELDS} }`),
  refusal('invalid_request', 'the request must be HTTP/1.1', '{ req.ver 1.0 }'),
  refusal('invalid_request', 'the request has no Host header', '{ req.hdr_cnt(host) eq 0 }'),
  refusal('invalid_request', 'a header name holds a character other than letters, digits and -, or a header value a control character', `{ req.hdrs -m reg '${BAD_HEADER_BYTES}' }`),
  refusal('invalid_request', 'the request target must be a path', '!{ url_beg / } !{ url_reg ^[a-zA-Z][a-zA-Z0-9+.-]*:// }'),
];

export interface HaproxyBackend {
  name: string;
  /** host:port */
  address: string;
}

export interface HaproxyOptions {
  /** `127.0.0.1:8080` or `*:8080` */
  bind: string;
  statsBind: string | null;
  backends: HaproxyBackend[];
  /**
   * Extra server options: in Docker, `resolvers docker init-addr last,libc,none` so HAProxy starts
   * while a node's name does not resolve yet and follows its address when it is recreated.
   */
  serverExtra?: string;
  /** The identity provider, served at `/idp/` through the balancer (host:port; it serves under /idp). */
  idp?: HaproxyBackend;
  /** Extra top-level sections (the Docker resolver). */
  extraSections?: string;
  /**
   * Global connection limit; unset: HAProxy derives it from the file-descriptor limit, which on
   * a development machine is all a loopback cluster can get anyway (a fixed figure above the
   * limit makes HAProxy refuse to start).
   */
  maxconn?: number;
}

/** Where the IdP is behind the balancer, as on a single node with the embedded IdP. */
export const IDP_PREFIX = '/idp';

export function renderHaproxyConfig(o: HaproxyOptions): string {
  const extra = o.serverExtra ? ` ${o.serverExtra}` : '';
  const lines = [
    'global',
    '    log stdout format raw local0 info',
    ...(o.maxconn ? [`    maxconn ${o.maxconn}`] : []),
    `    tune.bufsize ${HAPROXY_BUFSIZE}`,
    '',
    'defaults',
    '    mode http',
    '    log global',
    '    option httplog',
    '    option dontlognull',
    '    option forwardfor',
    '    option redispatch 1',
    // Without it HAProxy sends a streamed response's data with MSG_MORE, and the kernel holds a
    // lone SSE event up to 200 ms waiting for more: every event of a quiet stream came ~200 ms
    // late (test/haproxy-limits.test.ts).
    '    option http-no-delay',
    '    retries 2',
    '    timeout connect 2s',
    '    timeout http-request 10s',
    '    timeout http-keep-alive 30s',
    '    timeout queue 5s',
    '    timeout client 5m',
    '    timeout server 5m',
    '    timeout tunnel 1h',
    '    timeout client-fin 5s',
    '    timeout server-fin 5s',
    '',
    ...(o.extraSections ? [o.extraSections.trimEnd(), ''] : []),
    'frontend chat',
    `    bind ${o.bind}`,
    `    http-error status 503 ${JSON_TYPE} lf-string '${haproxyErrorBody('service_unavailable', 'no chat node is available; retry')}' hdr Retry-After 1`,
    ...REFUSALS,
    // An absolute-form target (http://host/path): the node's parser takes paths only.
    '    http-request set-uri %[pathq] if !{ url_beg / }',
    ...(o.idp ? ['    acl to_idp path /idp', '    acl to_idp path_beg /idp/', '    use_backend idp if to_idp'] : []),
    '    default_backend chat_nodes',
    '',
    ...(o.idp
      ? [
          'backend idp',
          '    option httpchk',
          `    http-check send meth GET uri ${IDP_PREFIX}/.well-known/openid-configuration ver HTTP/1.1 hdr Host idp`,
          '    http-check expect status 200',
          '    default-server inter 2s fall 2 rise 1',
          `    server ${o.idp.name} ${o.idp.address} check${extra}`,
          '',
        ]
      : []),
    'backend chat_nodes',
    '    balance roundrobin',
    '    option httpchk',
    // HTTP/1.1 with a Host header: the node's server (uWebSockets) leaves HTTP/1.0 unanswered.
    '    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host chat-node',
    '    http-check expect status 200',
    '    retry-on conn-failure empty-response 503',
    '    http-request disable-l7-retry unless METH_GET || METH_HEAD',
    '    default-server inter 1s fastinter 500ms fall 2 rise 1',
    ...o.backends.map((b) => `    server ${b.name} ${b.address} check${extra}`),
  ];
  if (o.statsBind) {
    lines.push('', 'frontend stats', `    bind ${o.statsBind}`, '    stats enable', '    stats uri /', '    stats refresh 2s', '    stats show-legends');
  }
  return `${lines.join('\n')}\n`;
}

export interface CheckResult {
  ok: boolean;
  output: string;
}

/** `haproxy -c -f <file>`: HAProxy's own parser says whether it would start with this file. */
export async function checkHaproxyConfig(file: string, haproxy = 'haproxy'): Promise<CheckResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(haproxy, ['-c', '-f', file]);
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string; message: string };
    if (e.code === 'ENOENT') return { ok: false, output: installHint([haproxy]) };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message };
  }
}
