/** Public routes: no token. */
import type { Static } from '@sinclair/typebox';
import { defineRoute } from '../route.ts';
import { NoQuery, VapidKey } from '../schemas/identity.ts';

export const getVapidPublicKey = defineRoute({
  operationId: 'getVapidPublicKey',
  summary: 'The web push (VAPID) public key; empty when web push is unavailable',
  tag: 'Notifications',
  method: 'GET',
  path: '/notifications/vapid-public-key',
  audience: ['public'],
  scopes: {},
  context: 'none',
  cors: 'public-read',
  schemas: { query: NoQuery, response: VapidKey },
  status: 200,
  errors: [],
  handler({ services }): Static<typeof VapidKey> {
    return { public_key: services.vapid.publicKey };
  },
});
