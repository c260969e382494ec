/**
 * User lookup: prefix search over the users the service knows in the tenant (profiles learned
 * from the IdP and from machines' hints), answering only those who may chat in the application.
 */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import { ineligible } from '../eligibility.ts';
import { pageLimit } from '../paging/limit.ts';
import { defineRoute } from '../route.ts';
import { MemberSummary } from '../schemas/chat.ts';
import { ApplicationParams, Closed } from '../schemas/common.ts';
import { person } from '../wire.ts';

export const QUERY_MIN = 2;
export const QUERY_MAX = 64;
export const LOOKUP_DEFAULT_LIMIT = 10;
export const LOOKUP_MAX_LIMIT = 20;
/** Known users read per lookup; eligibility is checked for at most these, CHECK_CHUNK at a time. */
const MAX_CANDIDATES = 50;
const CHECK_CHUNK = 10;

const LookupQuery = Type.Object(
  {
    query: Type.String({ description: `prefix of a user id or display name, case-insensitive; ${QUERY_MIN} to ${QUERY_MAX} characters after trimming` }),
    limit: Type.Optional(Type.String({ description: `how many users, default ${LOOKUP_DEFAULT_LIMIT}, at most ${LOOKUP_MAX_LIMIT} (larger values are capped)` })),
  },
  Closed,
);
const LookupResult = Type.Object({ items: Type.Array(MemberSummary) });

export const lookupUsers = defineRoute({
  operationId: 'lookupUsers',
  summary: 'Users of the tenant who may chat in the application, by user id or display name prefix',
  description:
    'Searches the users the service knows (those who have used chat, or were named by a machine), ordered by user_id, and answers only ACTIVE tenant members with access to the application. A bounded suggestion list, not paged: type more to narrow it.',
  tag: 'Users',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications/{application_id}/users',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:users.read'] },
  capabilities: { all: ['conversations.read'] },
  context: 'application',
  cors: 'application',
  rateLimit: 'lookup',
  schemas: { params: ApplicationParams, query: LookupQuery, response: LookupResult },
  status: 200,
  errors: ['query_too_short', 'query_too_long', 'invalid_limit'],
  async handler({ params, query, services }): Promise<Static<typeof LookupResult>> {
    const prefix = query.query.trim();
    const length = [...prefix].length;
    if (length < QUERY_MIN) throw new ApiError('query_too_short', `query must hold at least ${QUERY_MIN} characters (got ${length})`);
    if (length > QUERY_MAX) throw new ApiError('query_too_long', `query must hold at most ${QUERY_MAX} characters (got ${length})`);
    const limit = pageLimit(query.limit, LOOKUP_DEFAULT_LIMIT, LOOKUP_MAX_LIMIT);
    const candidates = await services.store.profiles.search(params.tenant_id, prefix, MAX_CANDIDATES);
    const items: Static<typeof LookupResult>['items'] = [];
    for (let i = 0; i < candidates.length && items.length < limit; i += CHECK_CHUNK) {
      const chunk = candidates.slice(i, i + CHECK_CHUNK);
      const refused = new Set(await ineligible(services, params.tenant_id, params.application_id, chunk.map((c) => c.user_id)));
      for (const c of chunk) if (!refused.has(c.user_id) && items.length < limit) items.push(person(c));
    }
    return { items };
  },
});
