/**
 * The error codes an operation can return, derived from its declaration so the OpenAPI
 * `x-error-codes` list and the behaviour of the edge cannot drift apart. Route-specific codes
 * (conversation_archived, invalid_cursor, ...) are declared on the route itself.
 */
import type { ErrorCode } from '../errors/catalog.ts';
import type { AnyRoute } from './route.ts';

/**
 * The contract's E403a group. Every operation of a tenant (and of an application) lists all five,
 * as the contract does for each one it details; a route of another context that the contract
 * gives E403a (`GET /me/tenants`) declares them itself.
 */
export const E403A: readonly ErrorCode[] = ['not_tenant_member', 'no_application_access', 'tenant_not_available', 'insufficient_scope', 'client_context_mismatch'];

export function routeErrorCodes(route: AnyRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  const isPublic = route.audience.includes('public');
  if (route.schemas.query || route.schemas.params) codes.add('invalid_request');
  if (route.schemas.body) {
    codes.add('invalid_request');
    codes.add('invalid_json');
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  if (!isPublic) {
    codes.add('invalid_token');
    codes.add('token_revoked');
    codes.add('insufficient_scope');
    codes.add('client_context_mismatch');
    codes.add('rate_limited');
    codes.add('identity_unavailable');
    if (route.context === 'tenant' || route.context === 'application') for (const c of E403A) codes.add(c);
    if (route.context === 'application') codes.add('application_not_found');
    if (route.capabilities) codes.add('missing_capability');
    if (!route.audience.includes('machine')) codes.add(route.machineRefusal ?? 'principal_not_allowed');
  }
  if (route.rateLimit) codes.add('rate_limited');
  for (const c of route.errors) codes.add(c);
  codes.add('server_error');
  return [...codes].sort();
}
