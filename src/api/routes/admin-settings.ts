/** Tenant chat settings: message retention (the retention job applies it, src/retention/). */
import type { Static } from '@sinclair/typebox';
import type { TenantSettings } from '../../store/index.ts';
import { defineRoute } from '../route.ts';
import { Settings, SettingsPatch } from '../schemas/admin.ts';
import { TenantParams } from '../schemas/common.ts';
import { NoQuery } from '../schemas/identity.ts';
import { ADMIN_ROUTE } from './admin.ts';

const wire = (s: TenantSettings): Static<typeof Settings> => ({ message_retention_days: s.message_retention_days, updated_at: s.updated_at });

export const getTenantSettings = defineRoute({
  ...ADMIN_ROUTE,
  operationId: 'getTenantSettings',
  summary: "The tenant's chat settings",
  description: 'A tenant that never changed its settings gets the defaults: message_retention_days null (keep forever), updated_at null.',
  method: 'GET',
  path: '/tenants/{tenant_id}/admin/settings',
  capabilities: { all: ['administration.settings.read'] },
  schemas: { params: TenantParams, query: NoQuery, response: Settings },
  status: 200,
  errors: [],
  async handler({ params, services }): Promise<Static<typeof Settings>> {
    return wire(await services.store.settings.get(params.tenant_id));
  },
});

export const updateTenantSettings = defineRoute({
  ...ADMIN_ROUTE,
  operationId: 'updateTenantSettings',
  summary: "Changes the tenant's chat settings; only the fields sent change",
  description:
    'message_retention_days: an integer-like number from 1 to 36,500 (30 and 30.0 are the same), or null to keep messages forever. Messages older than that are deleted by the retention job at its next run (CHAT_RETENTION_INTERVAL_MS). An empty body changes nothing.',
  method: 'PATCH',
  path: '/tenants/{tenant_id}/admin/settings',
  capabilities: { all: ['administration.settings.manage'] },
  schemas: { params: TenantParams, query: NoQuery, body: SettingsPatch, response: Settings },
  status: 200,
  errors: [],
  async handler({ params, body, services }): Promise<Static<typeof Settings>> {
    const { settings } = services.store;
    if (body.message_retention_days === undefined) return wire(await settings.get(params.tenant_id));
    return wire(await settings.update(params.tenant_id, { message_retention_days: body.message_retention_days }));
  },
});
