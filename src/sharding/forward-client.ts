/**
 * The sending side of the node-to-node channel: one keep-alive HTTP agent per peer.
 *
 * Bounds, per peer: at most `maxInFlightPerPeer` requests on the wire (the agent's sockets, kept
 * alive between calls), at most `maxQueuedPerPeer` more waiting for a socket; a call beyond both
 * fails at once with a 503 (`overloaded`) instead of queueing without limit behind a slow peer.
 * Every call has a timeout covering connect, send and answer.
 *
 * Failures are classified by what the owner may have done (wire.ts ForwardReason): a call that
 * failed before its body was handed to the socket (refused connection, unknown host) was never
 * delivered (`unreachable`); one that failed later (reset, timeout) may have run (`ambiguous`,
 * `timeout`). The router retries the first kind always, the second only when repeating the
 * operation is harmless. Answers from the owner come back as the errors it threw (wire.ts).
 *
 * Idle sockets are closed after 4 s, before uWS's own 10 s idle timeout on the server side, so
 * a call never picks a socket the server is closing at that moment.
 */
import http from 'node:http';
import type { OpArgs, OpResult, Operation } from './operations.ts';
import type { NodeInfo } from './types.ts';
import { ACTORS_PATH, FROM_HEADER, ForwardUnavailableError, RemoteServerError, SECRET_HEADER, decodeError } from './wire.ts';

export interface ForwardClientOptions {
  secret: string;
  selfId: string;
  /** Requests on the wire to one peer at once; default 64. */
  maxInFlightPerPeer?: number;
  /** Calls waiting for a socket to one peer beyond that; default 256. */
  maxQueuedPerPeer?: number;
  /** Default per-call timeout (connect to answer); default 3000 ms. */
  timeoutMs?: number;
  /** Largest answer accepted; default 8 MiB. */
  maxResponseBytes?: number;
}

interface Peer {
  agent: http.Agent;
  /** Calls in flight or queued. */
  pending: number;
}

const IDLE_SOCKET_MS = 4000;

export class ForwardClient {
  private readonly peers = new Map<string, Peer>();
  private readonly maxInFlight: number;
  private readonly maxQueued: number;
  private readonly timeoutMs: number;
  private readonly maxResponse: number;
  private closed = false;

  constructor(private readonly options: ForwardClientOptions) {
    this.maxInFlight = options.maxInFlightPerPeer ?? 64;
    this.maxQueued = options.maxQueuedPerPeer ?? 256;
    this.timeoutMs = options.timeoutMs ?? 3000;
    this.maxResponse = options.maxResponseBytes ?? 8 * 1024 * 1024;
  }

  /** Calls in flight or queued to `internalUrl` (for tests and metrics). */
  pendingTo(internalUrl: string): number {
    return this.peers.get(internalUrl)?.pending ?? 0;
  }

  async call<O extends Operation>(peer: NodeInfo, op: O, args: OpArgs<O>, conversation_id: string, timeoutMs = this.timeoutMs): Promise<OpResult<O>> {
    if (this.closed) throw new ForwardUnavailableError('unreachable', conversation_id, 'this node is shutting down');
    const state = this.peer(peer.internalUrl);
    if (state.pending >= this.maxInFlight + this.maxQueued) {
      throw new ForwardUnavailableError('overloaded', conversation_id, `too many calls waiting for node ${peer.nodeId}`);
    }
    state.pending++;
    try {
      const { status, body } = await this.send(state.agent, peer, op, JSON.stringify({ args }), conversation_id, timeoutMs);
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        throw new RemoteServerError(peer.nodeId, `answered ${status} with a body that is not JSON`);
      }
      if (status !== 200) throw decodeError(status, value, peer.nodeId);
      // Every host operation answers a record or nothing: null on the wire is `undefined` (void).
      return ((value as { result?: unknown }).result ?? undefined) as OpResult<O>;
    } finally {
      state.pending--;
    }
  }

  /** Drops the agents (and idle sockets) of peers no longer in the view. */
  retain(liveUrls: ReadonlySet<string>): void {
    for (const [url, state] of this.peers) {
      if (!liveUrls.has(url) && state.pending === 0) {
        state.agent.destroy();
        this.peers.delete(url);
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const state of this.peers.values()) state.agent.destroy();
    this.peers.clear();
  }

  private peer(url: string): Peer {
    let state = this.peers.get(url);
    if (!state) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: this.maxInFlight, maxFreeSockets: this.maxInFlight, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' });
      state = { agent, pending: 0 };
      this.peers.set(url, state);
    }
    return state;
  }

  private send(agent: http.Agent, peer: NodeInfo, op: Operation, payload: string, conversation_id: string, timeoutMs: number): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      let written = false;
      let timedOut = false;
      let settled = false;
      const done = (err: Error | null, value?: { status: number; body: string }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value as { status: number; body: string });
      };
      const req = http.request(new URL(`${ACTORS_PATH}${op}`, peer.internalUrl), {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          [SECRET_HEADER]: this.options.secret,
          [FROM_HEADER]: this.options.selfId,
        },
      });
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy();
      }, timeoutMs);
      req.on('finish', () => (written = true));
      req.on('error', (err: NodeJS.ErrnoException) => {
        // Not written: at most part of the body reached the owner, which runs nothing without all of it.
        const reason = !written ? 'unreachable' : timedOut ? 'timeout' : 'ambiguous';
        const detail = timedOut ? `no answer from node ${peer.nodeId} within ${timeoutMs} ms` : `node ${peer.nodeId}: ${err.code ?? err.message}`;
        done(new ForwardUnavailableError(reason, conversation_id, detail));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.maxResponse) {
            req.destroy();
            done(new RemoteServerError(peer.nodeId, `answer larger than ${this.maxResponse} bytes`));
          } else chunks.push(chunk);
        });
        res.on('end', () => done(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks, size).toString('utf8') }));
        // The connection closed before the whole answer arrived (the owner died, or our timeout).
        const cut = (): void => done(new ForwardUnavailableError(timedOut ? 'timeout' : 'ambiguous', conversation_id, `node ${peer.nodeId}: the answer was cut off`));
        res.on('error', cut);
        res.on('close', () => {
          if (!res.complete) cut();
        });
      });
      req.end(payload);
    });
  }
}
