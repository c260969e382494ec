/**
 * The route tables: every operation of the API in one list (the OpenAPI document's), and the web
 * app's sign-in routes, served at the origin's root (`/auth/...`) and no part of the API.
 */
import type { AnyRoute } from '../route.ts';
import { getMe, listMyTenants } from './account.ts';
import { listTenantApplications } from './admin.ts';
import { moderateRemoveMember } from './admin-moderation.ts';
import { getTenantOverview } from './admin-overview.ts';
import { getRolePermissions, updateRolePermissions } from './admin-roles.ts';
import { getTenantSettings, updateTenantSettings } from './admin-settings.ts';
import { lookupUsers } from './users.ts';
import { getConversation, listConversations, listMembers, listMessages } from './conversations-read.ts';
import { createConversation } from './conversations-write.ts';
import { deleteMessage, editMessage, sendMessage } from './messages-write.ts';
import { addMember, removeMember } from './members-write.ts';
import { deleteConversation, updateConversation } from './conversations-manage.ts';
import { addReaction, markRead, removeReaction, typing } from './interactions.ts';
import { getApplicationCapabilities, getTenantCapabilities } from './capabilities.ts';
import { getVapidPublicKey } from './public.ts';
import { getRealtimeToken } from './realtime.ts';
import { getPresence, presenceHeartbeat } from './presence.ts';
import { registerPushDevice, unregisterPushDevice } from './push-devices.ts';
import { getSignInConfig, renewSession, signInWithCode, signOut } from './auth.ts';
import { listChatApplications } from './tenant-applications.ts';

export const ROUTES: readonly AnyRoute[] = [
  getVapidPublicKey,
  getMe,
  listMyTenants,
  getTenantCapabilities,
  getApplicationCapabilities,
  listTenantApplications,
  moderateRemoveMember,
  getTenantOverview,
  getRolePermissions,
  updateRolePermissions,
  getTenantSettings,
  updateTenantSettings,
  lookupUsers,
  listConversations,
  createConversation,
  getConversation,
  updateConversation,
  deleteConversation,
  listMessages,
  sendMessage,
  editMessage,
  deleteMessage,
  listMembers,
  addMember,
  removeMember,
  addReaction,
  removeReaction,
  markRead,
  typing,
  getRealtimeToken,
  presenceHeartbeat,
  getPresence,
  registerPushDevice,
  unregisterPushDevice,
  listChatApplications,
] as AnyRoute[];

/**
 * The service's own web app's sign-in (docs/web-app.md#sign-in): no token, the node's own origin
 * only. The contract makes only the VAPID key route a public operation of the API, so these live
 * outside it, at `/auth/...`, beside `/healthz` and the web app, and outside the OpenAPI document.
 */
export const WEB_SIGN_IN_PREFIX = '';
export const WEB_SIGN_IN_ROUTES: readonly AnyRoute[] = [getSignInConfig, signInWithCode, renewSession, signOut] as AnyRoute[];
