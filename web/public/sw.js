/**
 * The web app's service worker (scope /app/): shows a notification for every push it receives,
 * as the contract requires, and opens the conversation when the notification is clicked.
 * The push document: {notification: {title, body}, data: {tenant_id, application_id, conversation_id, message_id}}.
 */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let doc = null;
  try {
    doc = event.data ? event.data.json() : null;
  } catch {
    doc = null;
  }
  const n = (doc && doc.notification) || {};
  const data = (doc && doc.data) || {};
  const title = typeof n.title === 'string' && n.title !== '' ? n.title : 'New message';
  const body = typeof n.body === 'string' ? n.body : '';
  // Tagged with the message: a push delivered twice (push services may redeliver) replaces its
  // notification instead of showing the message twice.
  const tag = typeof data.message_id === 'string' && data.message_id !== '' ? `message:${data.message_id}` : undefined;
  event.waitUntil(self.registration.showNotification(title, { body, data, icon: '/app/icon.svg', ...(tag ? { tag } : {}) }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const d = event.notification.data || {};
  const enc = encodeURIComponent;
  const url = d.tenant_id && d.application_id && d.conversation_id
    ? `/app/#/t/${enc(d.tenant_id)}/${enc(d.application_id)}/c/${enc(d.conversation_id)}`
    : '/app/';
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((list) => {
      for (const c of list) {
        if ('focus' in c) return c.navigate(url).then((w) => (w || c).focus());
      }
      return self.clients.openWindow(url);
    }),
  );
});
