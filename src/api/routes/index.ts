/** The route table: every operation of the API, in one list. */
import type { AnyRoute } from '../route.ts';
import { getMe, listMyTenants } from './account.ts';
import { listTenantApplications } from './admin.ts';
import { getConversation, listConversations, listMembers, listMessages } from './conversations-read.ts';
import { getApplicationCapabilities, getTenantCapabilities } from './capabilities.ts';
import { getOpenApi, getVapidPublicKey } from './public.ts';

export const ROUTES: readonly AnyRoute[] = [
  getVapidPublicKey,
  getOpenApi,
  getMe,
  listMyTenants,
  getTenantCapabilities,
  getApplicationCapabilities,
  listTenantApplications,
  listConversations,
  getConversation,
  listMessages,
  listMembers,
] as AnyRoute[];
