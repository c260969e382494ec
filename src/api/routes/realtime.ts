/** The realtime stream credential (docs/realtime.md). Users only. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import { conversationChannel, userChannel } from '../../bus/channels.ts';
import { MAX_GRANT_CHANNELS } from '../../realtime/credential.ts';
import { STREAM_PATH } from '../../realtime/index.ts';
import { defineRoute } from '../route.ts';
import { ApplicationParams, Closed, Id } from '../schemas/common.ts';

const RealtimeCredential = Type.Object({
  stream_url: Type.String({ description: 'opened with an EventSource client; subscribe-only; carries the credential in its query' }),
  expires: Type.Integer({ description: 'epoch milliseconds; reconnect with a fresh credential before it' }),
  user_id: Type.String({ description: "the caller's user id, so the client can recognise events about itself" }),
});

export const getRealtimeToken = defineRoute({
  operationId: 'getRealtimeToken',
  summary: 'A short-lived, subscribe-only credential for the realtime stream',
  description:
    "The stream covers the caller's own channel, the CHANNEL conversations the caller is an active member of, and optionally one PUBLIC channel being viewed (`conversation_id`). Open `stream_url` with an EventSource client; see docs/realtime.md for the stream format, resume and expiry.",
  tag: 'Realtime',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications/{application_id}/notifications/realtime-token',
  audience: ['user'],
  scopes: { user: [USER_SCOPE] },
  machineRefusal: 'principal_not_allowed',
  context: 'application',
  cors: 'application',
  schemas: {
    params: ApplicationParams,
    query: Type.Object({ conversation_id: Type.Optional(Id) }, Closed),
    response: RealtimeCredential,
  },
  status: 200,
  errors: ['not_found'],
  async handler({ params, query, principal, services }): Promise<Static<typeof RealtimeCredential>> {
    if (principal?.type !== 'user') throw new ApiError('principal_not_allowed', 'the realtime credential is for users only');
    const signer = services.realtime;
    if (signer === undefined) throw new Error('the realtime stream is not configured on this node');
    const { tenant_id, application_id } = params;
    const user_id = principal.user_id;
    const ctx = { tenant_id, application_id };
    const [channelIds, viewed] = await Promise.all([
      services.store.members.conversationIdsOf(ctx, user_id, 'CHANNEL'),
      query.conversation_id === undefined
        ? Promise.resolve(null)
        : services.store.conversations.get({ conversation_id: query.conversation_id, ...ctx }, { kind: 'user', user_id }, 0),
    ]);
    if (query.conversation_id !== undefined && (viewed === null || viewed.type !== 'CHANNEL' || viewed.visibility !== 'PUBLIC')) {
      throw new ApiError('not_found', 'no such public channel in this application');
    }
    // A credential names at most MAX_GRANT_CHANNELS channels (the stream's event id carries a
    // position for each): the own channel, the viewed one, then member CHANNELs up to the cap.
    const ids = new Set<string>();
    if (query.conversation_id !== undefined) ids.add(query.conversation_id);
    for (const id of channelIds) {
      if (ids.size >= MAX_GRANT_CHANNELS - 1) break;
      ids.add(id);
    }
    const channels = [userChannel(tenant_id, user_id), ...[...ids].map((id) => conversationChannel(tenant_id, application_id, id))];
    const expires = Math.min(Date.now() + services.config.realtime.tokenTtlMs, principal.exp * 1000);
    const credential = signer.sign({ tenant_id, application_id, user_id, channels, expires });
    return { stream_url: `${services.config.publicBaseUrl}${STREAM_PATH}?credential=${credential}`, expires, user_id };
  },
});
