/** The route table: every operation of the API, in one list. */
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
import { getOpenApi, getVapidPublicKey } from './public.ts';
import { getRealtimeToken } from './realtime.ts';
import { getPresence, presenceHeartbeat } from './presence.ts';
import { registerPushDevice, unregisterPushDevice } from './push-devices.ts';

export const ROUTES: readonly AnyRoute[] = [
  getVapidPublicKey,
  getOpenApi,
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
] as AnyRoute[];
