/**
 * "Every member and the actor must be an eligible member of the tenant with access to the
 * application, as the identity provider says": checked against the IdP's context answers (cached
 * like every other identity answer). Lists are bounded by the request schemas.
 */
import { ApiError } from '../errors/catalog.ts';
import type { Services } from './services.ts';

export async function ineligible(services: Services, tenant_id: string, application_id: string, userIds: readonly string[]): Promise<string[]> {
  const unique = [...new Set(userIds)];
  const answers = await Promise.all(unique.map((user_id) => services.identity.context({ tenant_id, application_id, user_id })));
  return unique.filter((_, i) => {
    const m = answers[i]?.member;
    return !m || m.status !== 'ACTIVE' || !m.application?.has_access;
  });
}

export async function assertEligible(services: Services, tenant_id: string, application_id: string, userIds: readonly string[]): Promise<void> {
  const bad = await ineligible(services, tenant_id, application_id, userIds);
  if (bad.length > 0) {
    throw new ApiError('target_user_not_eligible', `not eligible (an active tenant member with access to the application is required): ${bad.join(', ')}`);
  }
}
