/**
 * What the `messages` scenario and its Cassandra phase share: the demo context, the 200 GROUP
 * conversations, the 200-byte send bodies, and a small fetch-based client.
 */
import { BenchError } from './errors.ts';
import { inParallel } from './parallel.ts';

export const BASE = '/api/v1/tenants/acme/applications/support';
/** The demo users of acme with access to `support`. */
export const USERS = ['alice', 'bob', 'carol', 'frank', 'grace'];
export const CONVERSATIONS = 200;
export const MEMBERS_PER_CONVERSATION = 3;
export const SEND_BODY_BYTES = 200;

/** A send body of exactly `SEND_BODY_BYTES` bytes on behalf of `actor`. */
export function sendBody(actor: string, tag: string): string {
  const skeleton = JSON.stringify({ body: `${tag} `, actor_user_id: actor });
  const pad = SEND_BODY_BYTES - Buffer.byteLength(skeleton);
  if (pad < 0) throw new BenchError(`send body for ${actor} is over ${SEND_BODY_BYTES} bytes`);
  const body = JSON.stringify({ body: `${tag} ${'lorem ipsum dolor sit amet '.repeat(10).slice(0, pad)}`, actor_user_id: actor });
  return body;
}

export interface Api {
  origin: string;
  headers: Record<string, string>;
}

export async function call(api: Api, method: string, route: string, body?: unknown): Promise<{ status: number; text: string; bytes: Buffer }> {
  const res = await fetch(api.origin + route, {
    method,
    headers: body === undefined ? api.headers : { ...api.headers, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, text: bytes.toString('utf8'), bytes };
}

export async function expectOk(api: Api, method: string, route: string, body?: unknown): Promise<{ text: string; bytes: Buffer }> {
  const res = await call(api, method, route, body);
  if (res.status < 200 || res.status > 299) throw new BenchError(`${method} ${route} answered ${res.status}, not 2xx:\n${res.text.slice(0, 2000)}`);
  return res;
}

export interface Conversation {
  id: string;
  members: string[];
}

/** GROUPs of three users, created by the machine (no actor: it lists every member). */
export async function createConversations(api: Api): Promise<Conversation[]> {
  return inParallel(Array.from({ length: CONVERSATIONS }, (_, i) => i), 16, async (i) => {
    const members = Array.from({ length: MEMBERS_PER_CONVERSATION }, (_, k) => USERS[(i + k) % USERS.length]!);
    const res = JSON.parse((await expectOk(api, 'POST', `${BASE}/conversations`, { type: 'GROUP', name: `bench ${i}`, member_user_ids: members })).text) as { conversation_id: string };
    return { id: res.conversation_id, members };
  });
}

/** The largest page the history route serves. */
const COUNT_PAGE = 100;

/**
 * The messages each conversation holds, counted by paging its whole history. Not its newest seq:
 * on Cassandra seqs are reserved in ranges, and an owner change (a node joining or leaving the
 * ring) abandons the rest of a range, so seqs may have gaps there.
 */
export async function messageCounts(api: Api, conversations: Conversation[]): Promise<number[]> {
  return inParallel(conversations, 16, async (c) => {
    let n = 0;
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '' : `&before=${encodeURIComponent(cursor)}`;
      const page = JSON.parse((await expectOk(api, 'GET', `${BASE}/conversations/${c.id}/messages?limit=${COUNT_PAGE}${query}`)).text) as { items: unknown[]; next_cursor: string | null };
      n += page.items.length;
      cursor = page.next_cursor;
    } while (cursor !== null);
    return n;
  });
}

export const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
