/** Readiness probes: an HTTP GET answering 200, Redis answering PING, polled until a deadline. */
import net from 'node:net';

export async function httpOk(url: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

export function redisPing(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = '';
    sock.setTimeout(timeoutMs, () => {
      sock.destroy();
      resolve(false);
    });
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      data += d.toString();
      if (data.includes('\r\n')) {
        sock.end();
        resolve(data.startsWith('+PONG'));
      }
    });
    sock.on('error', () => resolve(false));
  });
}

/**
 * Polls `probe` until it holds. Fails early when `alive` says the process exited: waiting out the
 * deadline for a process that crashed at start would only delay the error.
 */
export async function waitUntil(what: string, probe: () => Promise<boolean>, alive: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (signal?.aborted) throw new Error(`interrupted while waiting for ${what}`);
    if (await probe()) return;
    if (!alive()) throw new Error(`${what} exited before it was ready`);
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
