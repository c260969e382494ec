/**
 * The signed-in frame: who is signed in, the tenant and application picker, administration when
 * the user holds an administration capability, notifications, sign-out; then chat or admin.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ok, type ChatApplication, type Me, type Tenant } from '../../../client/index.ts';
import { apiFor, describeError } from '../api.ts';
import type { SessionKeeper } from '../auth.ts';
import { go, parseRoute, useRoute } from '../route.ts';
import { disablePush } from '../push.ts';
import { Admin } from './Admin.tsx';
import { Chat } from './Chat.tsx';
import { PushToggle } from './PushToggle.tsx';

export function Shell({ keeper, onSignedOut }: { keeper: SessionKeeper; onSignedOut: () => void }) {
  const api = useMemo(() => apiFor(keeper), [keeper]);
  const route = useRoute();
  const [me, setMe] = useState<Me | null>(null);
  const [tenants, setTenants] = useState<Tenant[] | null>(null);
  const [apps, setApps] = useState<ChatApplication[] | null>(null);
  const [tenantCaps, setTenantCaps] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const tenant = route.view === 'home' ? null : route.tenant;
  const viewer = useMemo(() => ({ user_id: keeper.current.userId }), [keeper]);

  useEffect(() => {
    Promise.all([ok(api.GET('/me')), ok(api.GET('/me/tenants'))]).then(([m, t]) => {
      setMe(m);
      setTenants(t.items);
      const first = t.items[0];
      // Where the person is now, not when the request left: they may have moved since.
      if (parseRoute(location.hash).view === 'home' && first) go({ view: 'chat', tenant: first.tenant_id, app: '', conversation: null });
    }, (e: unknown) => setError(describeError(e)));
  }, [api]);

  useEffect(() => {
    setApps(null);
    setTenantCaps([]);
    if (tenant === null) return;
    const path = { tenant_id: tenant };
    Promise.all([ok(api.GET('/tenants/{tenant_id}/applications', { params: { path } })), ok(api.GET('/tenants/{tenant_id}/me/capabilities', { params: { path } }))]).then(
      ([a, c]) => {
        setApps(a.items);
        setTenantCaps(c.capabilities);
        const first = a.items[0];
        const now = parseRoute(location.hash);
        if (now.view === 'chat' && now.tenant === tenant && now.app === '' && first) go({ view: 'chat', tenant, app: first.application_id, conversation: null });
      },
      (e: unknown) => setError(describeError(e)),
    );
  }, [api, tenant]);

  const isAdmin = tenantCaps.some((c) => c.startsWith('administration.'));
  const signOut = async () => {
    await disablePush(api, tenants?.map((t) => t.tenant_id) ?? []).catch(() => undefined);
    await keeper.signOut();
    location.hash = '';
    onSignedOut();
  };

  return (
    <div class="shell">
      <header class="topbar">
        <span class="brand">Chat</span>
        <label class="picker">
          <span>Tenant</span>
          <select
            value={tenant ?? ''}
            onChange={(e) => go({ view: 'chat', tenant: (e.target as HTMLSelectElement).value, app: '', conversation: null })}
          >
            {tenant === null && <option value="">Choose…</option>}
            {tenants?.map((t) => (
              <option value={t.tenant_id} key={t.tenant_id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        {tenant !== null && (
          <label class="picker">
            <span>Application</span>
            <select
              value={route.view === 'chat' ? route.app : ''}
              onChange={(e) => go({ view: 'chat', tenant, app: (e.target as HTMLSelectElement).value, conversation: null })}
            >
              {route.view !== 'chat' && <option value="">Choose…</option>}
              {apps?.map((a) => (
                <option value={a.application_id} key={a.application_id}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
        )}
        {tenant !== null && isAdmin && (
          <a class="navlink" href={`#/t/${encodeURIComponent(tenant)}/admin`} aria-current={route.view === 'admin' ? 'page' : undefined}>
            Administration
          </a>
        )}
        <span class="spacer" />
        {tenant !== null && <PushToggle api={api} tenant={tenant} />}
        <span class="whoami" aria-label="Signed in as">
          {me?.display_name ?? keeper.current.userId}
        </span>
        <button onClick={() => void signOut()}>Sign out</button>
      </header>
      {error && (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      {tenants !== null && tenants.length === 0 && <p class="empty">You are not a member of any organisation where chat is on.</p>}
      {route.view === 'chat' && route.app !== '' && (
        <Chat api={api} me={viewer} tenant={route.tenant} app={route.app} conversationId={route.conversation} key={`${route.tenant}/${route.app}`} />
      )}
      {route.view === 'chat' && apps !== null && apps.length === 0 && <p class="empty">No application of this organisation has chat for you.</p>}
      {route.view === 'admin' && <Admin api={api} tenant={route.tenant} capabilities={tenantCaps} key={route.tenant} />}
    </div>
  );
}
