/**
 * Push device registration, tenant level: one registration serves every application of the
 * tenant, a user may register several devices, and registering the same device again is safe
 * (it updates the keys, and moves a device another user registered before to the caller: one
 * device pushes to one user). Users only; tenant CORS. `fcm` and `apns` tokens are stored, but
 * only `web` subscriptions are delivered (docs/push.md).
 */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import { defineRoute } from '../route.ts';
import { Closed, MAX_INTEGER, TenantParams } from '../schemas/common.ts';
import { NoQuery } from '../schemas/identity.ts';

const MAX_TOKEN = 4096;

const Subscription = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: MAX_TOKEN, description: 'the push service URL of the subscription (https)' }),
    /** PushSubscription.toJSON() sends it; accepted and ignored. */
    expirationTime: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: MAX_INTEGER }), Type.Null()])),
    keys: Type.Object(
      {
        p256dh: Type.String({ minLength: 1, maxLength: 256, description: "the browser's P-256 public key, URL-safe base64" }),
        auth: Type.String({ minLength: 1, maxLength: 64, description: "the browser's 16-byte authentication secret, URL-safe base64" }),
      },
      Closed,
    ),
  },
  Closed,
);

const RegisterBody = Type.Object(
  {
    platform: Type.Union([Type.Literal('web'), Type.Literal('fcm'), Type.Literal('apns')]),
    subscription: Type.Optional(Subscription),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TOKEN, description: 'fcm and apns: the native device token' })),
  },
  Closed,
);

const UnregisterBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: MAX_TOKEN, description: 'a browser: the subscription endpoint; a native device: its token' }) },
  Closed,
);

const personal = {
  audience: ['user'] as 'user'[],
  scopes: { user: [USER_SCOPE] },
  machineRefusal: 'principal_not_allowed' as const,
  context: 'tenant' as const,
  cors: 'tenant' as const,
  tag: 'Notifications',
  path: '/tenants/{tenant_id}/notifications/push/devices',
};

function userOf(access: AccessContext | null): string {
  const p = access?.principal;
  if (p?.type !== 'user') throw new ApiError('user_required', 'this operation acts as a person');
  return p.user_id;
}

const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;
function b64urlBytes(s: string): number {
  return B64URL.test(s) ? Buffer.from(s.replace(/=+$/, ''), 'base64url').length : -1;
}

/** Cross-field rules the schema cannot say: what each platform needs, key shapes, https. */
function problemsOf(body: { platform: 'web' | 'fcm' | 'apns'; subscription?: { endpoint: string; keys: { p256dh: string; auth: string } }; token?: string }): string[] {
  const problems: string[] = [];
  if (body.platform === 'web') {
    if (body.subscription === undefined) return ['body.subscription: required for platform web'];
    if (body.token !== undefined) problems.push('body.token: not accepted for platform web (the subscription endpoint is the token)');
    let url: URL | null = null;
    try {
      url = new URL(body.subscription.endpoint);
    } catch {
      /* reported below */
    }
    if (url === null || url.protocol !== 'https:') problems.push('body.subscription.endpoint: must be an absolute https URL');
    const p256dh = body.subscription.keys.p256dh;
    if (b64urlBytes(p256dh) !== 65 || Buffer.from(p256dh.replace(/=+$/, ''), 'base64url')[0] !== 4) {
      problems.push('body.subscription.keys.p256dh: must be an uncompressed P-256 public key (65 bytes), URL-safe base64');
    }
    if (b64urlBytes(body.subscription.keys.auth) !== 16) problems.push('body.subscription.keys.auth: must be 16 bytes, URL-safe base64');
  } else {
    if (body.token === undefined) problems.push(`body.token: required for platform ${body.platform}`);
    if (body.subscription !== undefined) problems.push(`body.subscription: not accepted for platform ${body.platform}`);
  }
  return problems;
}

export const registerPushDevice = defineRoute({
  ...personal,
  operationId: 'registerPushDevice',
  summary: 'Register a device for push notifications (idempotent)',
  description:
    'platform web: `subscription` as PushSubscription.toJSON() gives it (endpoint https URL, keys.p256dh, keys.auth). platform fcm or apns: `token`, the native device token (delivered when the deployment configures FCM or APNs; otherwise stored only). Registering again is safe; a device registered by another user moves to the caller.',
  method: 'POST',
  schemas: { params: TenantParams, query: NoQuery, body: RegisterBody },
  status: 204,
  errors: ['invalid_request'],
  async handler({ params, body, access, services }): Promise<void> {
    const user_id = userOf(access);
    const problems = problemsOf(body);
    if (problems.length > 0) throw new ApiError('invalid_request', problems);
    const sub = body.subscription;
    await services.store.pushDevices.upsert(
      body.platform === 'web' && sub !== undefined
        ? { tenant_id: params.tenant_id, user_id, platform: 'web', token_or_endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth }
        : { tenant_id: params.tenant_id, user_id, platform: body.platform, token_or_endpoint: body.token as string, p256dh: null, auth: null },
    );
  },
});

export const unregisterPushDevice = defineRoute({
  ...personal,
  operationId: 'unregisterPushDevice',
  summary: 'Stop push to a device (idempotent)',
  description: "token: a browser's subscription endpoint, or a native device token. Answers 204 whether or not the caller had it registered; another user's device is left alone.",
  method: 'DELETE',
  schemas: { params: TenantParams, query: NoQuery, body: UnregisterBody },
  status: 204,
  errors: ['invalid_request'],
  async handler({ params, body, access, services }): Promise<void> {
    await services.store.pushDevices.delete(params.tenant_id, userOf(access), body.token);
  },
});
