/**
 * Presence, per account (tenant + user), never per conversation. Users only; tenant CORS (the
 * origins of any application client of the tenant).
 *
 * An app sends a heartbeat while it is open (every ~half of CHAT_PRESENCE_WINDOW_MS); a user is
 * `online` while their last heartbeat is within the window. Reading presence drops ids that are
 * not ACTIVE members of the tenant (asked of the IdP, cached like every identity answer), so
 * presence never confirms who exists in another tenant. See docs/presence.md.
 */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import { defineRoute } from '../route.ts';
import { Closed, DateTime, Nullable, TenantParams } from '../schemas/common.ts';
import { NoQuery } from '../schemas/identity.ts';
import type { Services } from '../services.ts';

export const MAX_PRESENCE_IDS = 100;

const PresenceEntry = Type.Object({
  user_id: Type.String(),
  status: Type.Union([Type.Literal('online'), Type.Literal('offline')]),
  last_seen_at: Nullable(DateTime),
});
const PresenceList = Type.Object({ items: Type.Array(PresenceEntry) });
const PresenceQuery = Type.Object(
  {
    user_ids: Type.Optional(
      Type.String({ maxLength: MAX_PRESENCE_IDS * 129, description: `comma-separated user ids, at most ${MAX_PRESENCE_IDS}; omitted: the caller's own entry` }),
    ),
  },
  Closed,
);

const personal = {
  audience: ['user'] as 'user'[],
  scopes: { user: [USER_SCOPE] },
  context: 'tenant' as const,
  cors: 'tenant' as const,
  tag: 'Presence',
};

function userOf(access: AccessContext | null): string {
  const p = access?.principal;
  if (p?.type !== 'user') throw new ApiError('user_required', 'this operation acts as a person');
  return p.user_id;
}

function parseIds(raw: string): string[] {
  const ids = [...new Set(raw.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
  if (ids.length > MAX_PRESENCE_IDS) throw new ApiError('invalid_request', [`query.user_ids: at most ${MAX_PRESENCE_IDS} user ids (got ${ids.length})`]);
  const long = ids.find((s) => s.length > 128);
  if (long !== undefined) throw new ApiError('invalid_request', ['query.user_ids: a user id is at most 128 characters']);
  return ids;
}

/** Of `ids`, the ACTIVE members of the tenant, as the IdP says (cached context answers). */
async function tenantMembers(services: Services, tenant_id: string, ids: readonly string[]): Promise<string[]> {
  const answers = await Promise.all(ids.map((user_id) => services.identity.context({ tenant_id, user_id })));
  return ids.filter((_, i) => answers[i]?.member?.status === 'ACTIVE');
}

export const presenceHeartbeat = defineRoute({
  ...personal,
  operationId: 'presenceHeartbeat',
  summary: 'Tell the service the app is open: the caller is online for the presence window',
  description:
    'Send while the app is open, about every half of the presence window (CHAT_PRESENCE_WINDOW_MS, default 60 s); the caller counts as online until the window passes without one. No body. Per account: one heartbeat covers every application of the tenant.',
  method: 'POST',
  path: '/tenants/{tenant_id}/presence/heartbeat',
  machineRefusal: 'user_required',
  schemas: { params: TenantParams, query: NoQuery },
  status: 204,
  errors: [],
  async handler({ params, access, services }): Promise<void> {
    await services.presence.heartbeat(params.tenant_id, userOf(access), Date.now());
  },
});

export const getPresence = defineRoute({
  ...personal,
  operationId: 'getPresence',
  summary: 'Online status of tenant members',
  description: `user_ids: comma-separated, at most ${MAX_PRESENCE_IDS} distinct ids (more is invalid_request); ids that are not active members of the tenant are dropped; one entry per remaining id, in the order asked. Omitted: the caller's own entry only. last_seen_at is the last heartbeat, or null when none is known (never seen, or forgotten long after the window).`,
  method: 'GET',
  path: '/tenants/{tenant_id}/presence',
  machineRefusal: 'principal_not_allowed',
  schemas: { params: TenantParams, query: PresenceQuery, response: PresenceList },
  status: 200,
  errors: ['invalid_request'],
  async handler({ params, query, access, services }): Promise<Static<typeof PresenceList>> {
    const me = userOf(access);
    const ids = query.user_ids === undefined ? [me] : await tenantMembers(services, params.tenant_id, parseIds(query.user_ids));
    return { items: await services.presence.statuses(params.tenant_id, ids, Date.now()) };
  },
});
