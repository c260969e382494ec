/** Public routes: no token. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
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

export const getOpenApi = defineRoute({
  operationId: 'getOpenApi',
  summary: 'This API as an OpenAPI 3.1 document with x-audience, x-required-scopes, x-required-capabilities and x-error-codes',
  tag: 'Meta',
  method: 'GET',
  path: '/openapi.json',
  audience: ['public'],
  scopes: {},
  context: 'none',
  cors: 'public-read',
  schemas: { query: NoQuery, response: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) },
  status: 200,
  errors: [],
  handler({ services }): unknown {
    return services.openapi();
  },
});
