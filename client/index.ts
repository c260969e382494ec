/**
 * A typed client for the chat API, for the service's own web app and any TypeScript application.
 *
 * The request and response types are generated from schema/openapi.json (client/openapi.d.ts,
 * `npm run client`; test/client.test.ts fails when they disagree), and requests go through
 * openapi-fetch, so a path, a parameter or a field the API does not have does not compile:
 *
 *   const chat = createChatClient({ baseUrl: 'http://127.0.0.1:8080/api/v1', token: () => accessToken });
 *   const page = await ok(chat.GET('/tenants/{tenant_id}/applications/{application_id}/conversations', {
 *     params: { path: { tenant_id: 'acme', application_id: 'support' }, query: { limit: 20 } },
 *   }));
 *
 * `ok()` returns the body or throws a `ChatApiError` carrying the contract's error body; branch
 * on `code`, never on the message. The realtime stream: client/realtime.ts.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './openapi.d.ts';

export type { components, operations, paths };
export type { ChatEvent, ChatEventType } from './events.ts';
export { CHAT_EVENT_TYPES } from './events.ts';

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The success body of an operation, by operationId. */
export type Ok<K extends keyof operations> = JsonOf<operations[K]['responses'] extends infer R ? (200 extends keyof R ? R[200] : 201 extends keyof R ? R[201] : never) : never>;
/** The JSON request body of an operation, by operationId. */
export type Body<K extends keyof operations> = operations[K] extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;

export type ErrorBody = components['schemas']['ErrorBody'];
export type Me = Ok<'getMe'>;
export type Tenant = Ok<'listMyTenants'>['items'][number];
export type ChatApplication = Ok<'listChatApplications'>['items'][number];
export type Capabilities = Ok<'getTenantCapabilities'>;
export type Conversation = Ok<'listConversations'>['items'][number];
export type ConversationDetail = Ok<'getConversation'>;
export type Message = Ok<'listMessages'>['items'][number];
export type Member = Ok<'listMembers'>['items'][number];
export type UserSummary = Ok<'lookupUsers'>['items'][number];
export type PresenceEntry = Ok<'getPresence'>['items'][number];
export type RealtimeCredential = Ok<'getRealtimeToken'>;
export type AdminApplication = Ok<'listTenantApplications'>['items'][number];
export type TenantOverview = Ok<'getTenantOverview'>;
export type RoleMapping = Ok<'getRolePermissions'>;
export type Settings = Ok<'getTenantSettings'>;

/** An answer that is not 2xx, with the contract's error body (or a stand-in when there is none). */
export class ChatApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: ErrorBody;
  readonly retryAfterSeconds: number | null;

  constructor(status: number, body: ErrorBody, retryAfter: string | null) {
    super(`${status} ${body.error}: ${Array.isArray(body.message) ? body.message.join('; ') : body.message}`);
    this.name = 'ChatApiError';
    this.status = status;
    this.code = body.error;
    this.body = body;
    const seconds = retryAfter === null ? NaN : Number(retryAfter);
    this.retryAfterSeconds = Number.isFinite(seconds) ? seconds : null;
  }
}

export interface ChatClientOptions {
  /** The API's base URL, ending in /api/v1 (relative, such as `/api/v1`, in a browser). */
  baseUrl: string;
  /** The bearer token for each request; null or absent: none (public routes). */
  token?: () => string | null | Promise<string | null>;
  fetch?: typeof globalThis.fetch;
}

export type ChatClient = Client<paths>;

export function createChatClient(options: ChatClientOptions): ChatClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const token = options.token;
  if (token) {
    client.use({
      async onRequest({ request }) {
        const t = await token();
        if (t) request.headers.set('Authorization', `Bearer ${t}`);
        return request;
      },
    });
  }
  return client;
}

interface Outcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The body of a 2xx answer, or a thrown ChatApiError. */
export async function ok<T>(pending: Promise<Outcome<T>>): Promise<NonNullable<T>> {
  const r = await pending;
  if (!r.response.ok) throw toError(r.response, r.error);
  return r.data as NonNullable<T>;
}

/** For operations answering 204: resolves, or throws a ChatApiError. */
export async function done(pending: Promise<Outcome<unknown>>): Promise<void> {
  const r = await pending;
  if (!r.response.ok) throw toError(r.response, r.error);
}

function toError(response: Response, error: unknown): ChatApiError {
  const e = error as Partial<ErrorBody> | undefined;
  const body: ErrorBody =
    e && typeof e.error === 'string'
      ? (e as ErrorBody)
      : { status_code: response.status, error: response.status >= 500 ? 'server_error' : 'unknown_error', message: `HTTP ${response.status}`, path: new URL(response.url || 'http://x/').pathname, timestamp: new Date().toISOString() };
  return new ChatApiError(response.status, body, response.headers.get('Retry-After'));
}
