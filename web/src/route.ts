/**
 * The app's place lives in the address's hash, so links (a notification's click included) open
 * the right view and the sign-in redirect URI stays the one address /app/:
 *   #/t/{tenant}/                          chat, the first application
 *   #/t/{tenant}/{application}            chat
 *   #/t/{tenant}/{application}/c/{id}     one conversation
 *   #/t/{tenant}/admin                    administration
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'home' }
  | { view: 'chat'; tenant: string; app: string; conversation: string | null }
  | { view: 'admin'; tenant: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map((p) => decodeURIComponent(p));
  if (parts[0] !== 't' || !parts[1]) return { view: 'home' };
  if (parts[2] === 'admin') return { view: 'admin', tenant: parts[1] };
  return { view: 'chat', tenant: parts[1], app: parts[2] ?? '', conversation: parts[3] === 'c' && parts[4] ? parts[4] : null };
}

export function href(r: Route): string {
  const e = encodeURIComponent;
  switch (r.view) {
    case 'home':
      return '#/';
    case 'admin':
      return `#/t/${e(r.tenant)}/admin`;
    case 'chat':
      return `#/t/${e(r.tenant)}/${e(r.app)}${r.conversation ? `/c/${e(r.conversation)}` : ''}`;
  }
}

export function go(r: Route): void {
  location.hash = href(r);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
