/**
 * Web push opt-in (docs/push.md): from a click, ask for permission, register the service worker,
 * subscribe with the node's VAPID key and register the subscription with the tenant. The service
 * worker (public/sw.js) shows every push. Sign-out unregisters and unsubscribes, so a shared
 * computer does not keep notifying the previous user.
 */
import { done, ok, type ChatClient } from '../../client/index.ts';

const REGISTERED_KEY = 'chat.push.tenants';

export function pushSupported(): boolean {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

function registeredTenants(): string[] {
  return JSON.parse(localStorage.getItem(REGISTERED_KEY) ?? '[]') as string[];
}

export function pushEnabledFor(tenant: string): boolean {
  return pushSupported() && Notification.permission === 'granted' && registeredTenants().includes(tenant);
}

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const b64 = base64url.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(base64url.length / 4) * 4, '=');
  const raw = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** Must run from a user's click: the first permission request has to. */
export async function enablePush(api: ChatClient, tenant: string): Promise<void> {
  if (!pushSupported()) throw new Error('This browser cannot show push notifications.');
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('Notifications are blocked for this site: allow them in the browser settings.');
  const { public_key } = await ok(api.GET('/notifications/vapid-public-key'));
  if (public_key === '') throw new Error('Push notifications are switched off on this server.');
  const reg = await navigator.serviceWorker.register('/app/sw.js', { scope: '/app/' });
  await navigator.serviceWorker.ready;
  const sub = (await reg.pushManager.getSubscription()) ?? (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(public_key) }));
  const json = sub.toJSON();
  const p256dh = json.keys?.p256dh;
  const auth = json.keys?.auth;
  if (!json.endpoint || !p256dh || !auth) throw new Error('The browser gave an incomplete push subscription.');
  await done(
    api.POST('/tenants/{tenant_id}/notifications/push/devices', {
      params: { path: { tenant_id: tenant } },
      body: { platform: 'web', subscription: { endpoint: json.endpoint, keys: { p256dh, auth } } },
    }),
  );
  localStorage.setItem(REGISTERED_KEY, JSON.stringify([...new Set([...registeredTenants(), tenant])]));
}

export async function disablePush(api: ChatClient, tenants: string[]): Promise<void> {
  const registered = registeredTenants();
  localStorage.removeItem(REGISTERED_KEY);
  if (!pushSupported() || registered.length === 0) return;
  const reg = await navigator.serviceWorker.getRegistration('/app/');
  const sub = await reg?.pushManager.getSubscription();
  if (!sub) return;
  await Promise.all(
    registered
      .filter((t) => tenants.includes(t))
      .map((t) => done(api.DELETE('/tenants/{tenant_id}/notifications/push/devices', { params: { path: { tenant_id: t } }, body: { token: sub.endpoint } })).catch(() => undefined)),
  );
  await sub.unsubscribe().catch(() => false);
}
