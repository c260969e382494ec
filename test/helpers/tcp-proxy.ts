/**
 * A loopback TCP proxy that can cut every connection through it, to drop a browser's
 * EventSource in the middle of a stream exactly as a network failure would.
 */
import net from 'node:net';

export class TcpProxy {
  /** Where connections go; set once the upstream server is listening. */
  target = 0;
  private readonly sockets = new Set<net.Socket>();
  private refuseUntil = 0;

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = net.createServer((client) => proxy?.accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  private accept(client: net.Socket): void {
    if (Date.now() < this.refuseUntil || this.target === 0) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  /** Destroys every connection now and refuses new ones for `refuseMs`. Returns how many were cut. */
  cut(refuseMs: number): number {
    this.refuseUntil = Date.now() + refuseMs;
    const n = this.sockets.size;
    for (const s of this.sockets) s.destroy();
    return n;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
