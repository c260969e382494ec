/**
 * Tenant administration, each part shown only to those holding its capability: overview,
 * applications, the role-permission editor (tenant_owner locked), retention, moderation removal.
 */
import { useState } from 'preact/hooks';
import { done, ok, type AdminApplication, type ChatClient, type Settings, type TenantOverview } from '../../../client/index.ts';
import { describeError } from '../api.ts';
import { Roles } from './AdminRoles.tsx';
import { Problem, useLoad } from './admin-common.tsx';

type Part = 'overview' | 'applications' | 'roles' | 'retention' | 'moderation';
const PARTS: { part: Part; label: string; needs: string }[] = [
  { part: 'overview', label: 'Overview', needs: 'administration.overview.read' },
  { part: 'applications', label: 'Applications', needs: 'administration.applications.read' },
  { part: 'roles', label: 'Roles and permissions', needs: 'administration.roles.read' },
  { part: 'retention', label: 'Message retention', needs: 'administration.settings.read' },
  { part: 'moderation', label: 'Moderation', needs: 'administration.members.moderate' },
];

export function Admin({ api, tenant, capabilities }: { api: ChatClient; tenant: string; capabilities: string[] }) {
  const visible = PARTS.filter((p) => capabilities.includes(p.needs));
  const [part, setPart] = useState<Part | null>(null);
  const current = part ?? visible[0]?.part ?? null;
  const can = (c: string) => capabilities.includes(c);
  return (
    <div class="admin">
      <nav aria-label="Administration">
        <h2>Administration</h2>
        <ul>
          {visible.map((p) => (
            <li key={p.part}>
              <button aria-current={current === p.part ? 'page' : undefined} onClick={() => setPart(p.part)}>
                {p.label}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <main class="main admin-main">
        {current === null && <p class="empty">You hold no administration permission here.</p>}
        {current === 'overview' && <Overview api={api} tenant={tenant} />}
        {current === 'applications' && <Applications api={api} tenant={tenant} />}
        {current === 'roles' && <Roles api={api} tenant={tenant} canManage={can('administration.roles.manage')} canListApps={can('administration.applications.read')} />}
        {current === 'retention' && <Retention api={api} tenant={tenant} canManage={can('administration.settings.manage')} />}
        {current === 'moderation' && <Moderation api={api} tenant={tenant} />}
      </main>
    </div>
  );
}

function Overview({ api, tenant }: { api: ChatClient; tenant: string }) {
  const [o, error] = useLoad<TenantOverview>(() => ok(api.GET('/tenants/{tenant_id}/admin/overview', { params: { path: { tenant_id: tenant } } })), [tenant]);
  return (
    <section aria-labelledby="ov">
      <h2 id="ov">Overview{o ? `: ${o.tenant.name}` : ''}</h2>
      <Problem text={error} />
      {o && (
        <dl class="stats">
          <dt>Applications</dt>
          <dd>{o.applications}</dd>
          <dt>With chat</dt>
          <dd>{o.chat_enabled_applications}</dd>
          <dt>Members in conversations</dt>
          <dd>{o.members}</dd>
          <dt>Direct conversations</dt>
          <dd>{o.conversations.direct}</dd>
          <dt>Groups</dt>
          <dd>{o.conversations.group}</dd>
          <dt>Channels</dt>
          <dd>{o.conversations.channel}</dd>
          <dt>All conversations</dt>
          <dd>{o.conversations.total}</dd>
        </dl>
      )}
    </section>
  );
}

function Applications({ api, tenant }: { api: ChatClient; tenant: string }) {
  const [apps, error] = useLoad(() => ok(api.GET('/tenants/{tenant_id}/admin/applications', { params: { path: { tenant_id: tenant } } })), [tenant]);
  return (
    <section aria-labelledby="apps">
      <h2 id="apps">Applications</h2>
      <Problem text={error} />
      {apps && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Access</th>
              <th scope="col">Status</th>
              <th scope="col">Chat</th>
            </tr>
          </thead>
          <tbody>
            {apps.items.map((a: AdminApplication) => (
              <tr key={a.application_id}>
                <th scope="row">{a.name}</th>
                <td>{a.application_id}</td>
                <td>{a.access_mode === 'ALL_TENANT_MEMBERS' ? 'Every member' : a.access_mode === 'ASSIGNED_USERS' ? 'Assigned people' : a.access_mode}</td>
                <td>{a.identity_status}</td>
                <td>{a.chat_enabled ? 'On' : 'Off'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Retention({ api, tenant, canManage }: { api: ChatClient; tenant: string; canManage: boolean }) {
  const [settings, error, setSettings] = useLoad<Settings>(() => ok(api.GET('/tenants/{tenant_id}/admin/settings', { params: { path: { tenant_id: tenant } } })), [tenant]);
  const [forever, setForever] = useState<boolean | null>(null);
  const [days, setDays] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const keepForever = forever ?? settings?.message_retention_days === null;
  const shownDays = days !== '' ? days : String(settings?.message_retention_days ?? 365);
  return (
    <section aria-labelledby="ret">
      <h2 id="ret">Message retention</h2>
      <Problem text={error} />
      {settings && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(shownDays);
            if (!keepForever && !(Number.isInteger(n) && n >= 1)) {
              setFailure('Enter a whole number of days, at least 1.');
              return;
            }
            setFailure(null);
            ok(api.PATCH('/tenants/{tenant_id}/admin/settings', { params: { path: { tenant_id: tenant } }, body: { message_retention_days: keepForever ? null : n } })).then(
              (s) => {
                setSettings(s);
                setStatus('Saved.');
              },
              (err: unknown) => setFailure(describeError(err)),
            );
          }}
        >
          <fieldset disabled={!canManage}>
            <legend>How long messages are kept</legend>
            <label class="inline">
              <input type="checkbox" checked={keepForever} onChange={(e) => setForever((e.target as HTMLInputElement).checked)} />
              Keep messages forever
            </label>
            <label>
              Delete messages older than (days)
              <input type="number" min={1} max={36500} step={1} disabled={keepForever} value={shownDays} onInput={(e) => setDays((e.target as HTMLInputElement).value)} />
            </label>
            {canManage && (
              <button class="primary" type="submit">
                Save retention
              </button>
            )}
          </fieldset>
          {status && (
            <p role="status" class="ok">
              {status}
            </p>
          )}
          <Problem text={failure} />
          {settings.updated_at && <p class="muted">Last changed {new Date(settings.updated_at).toLocaleString()}.</p>}
        </form>
      )}
    </section>
  );
}

function Moderation({ api, tenant }: { api: ChatClient; tenant: string }) {
  const [conversation, setConversation] = useState('');
  const [user, setUser] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-labelledby="mod">
      <h2 id="mod">Moderation</h2>
      <p class="muted">Remove a person from any conversation of this tenant. The conversation id is shown in the address of a conversation.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setStatus(null);
          setError(null);
          done(api.DELETE('/tenants/{tenant_id}/admin/conversations/{conversation_id}/members/{user_id}', { params: { path: { tenant_id: tenant, conversation_id: conversation.trim(), user_id: user.trim() } } })).then(
            () => setStatus(`Removed ${user.trim()} from the conversation.`),
            (err: unknown) => setError(describeError(err)),
          );
        }}
      >
        <label>
          Conversation id
          <input value={conversation} required onInput={(e) => setConversation((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          User id
          <input value={user} required onInput={(e) => setUser((e.target as HTMLInputElement).value)} />
        </label>
        <button class="danger" type="submit">
          Remove from conversation
        </button>
        {status && (
          <p role="status" class="ok">
            {status}
          </p>
        )}
        <Problem text={error} />
      </form>
    </section>
  );
}
