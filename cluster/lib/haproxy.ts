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
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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
  /** Extra top-level sections (the Docker resolver). */
  extraSections?: string;
  /**
   * Global connection limit; unset: HAProxy derives it from the file-descriptor limit, which on
   * a development machine is all a loopback cluster can get anyway (a fixed figure above the
   * limit makes HAProxy refuse to start).
   */
  maxconn?: number;
}

export function renderHaproxyConfig(o: HaproxyOptions): string {
  const extra = o.serverExtra ? ` ${o.serverExtra}` : '';
  const lines = [
    'global',
    '    log stdout format raw local0 info',
    ...(o.maxconn ? [`    maxconn ${o.maxconn}`] : []),
    '',
    'defaults',
    '    mode http',
    '    log global',
    '    option httplog',
    '    option dontlognull',
    '    option forwardfor',
    '    option redispatch 1',
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
    '    default_backend chat_nodes',
    '',
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
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message };
  }
}
