/** The role-permission editor: per mapping (whole tenant or one application), per role; tenant_owner locked. */
import { useState } from 'preact/hooks';
import { ok, type AdminApplication, type ChatClient, type RoleMapping } from '../../../client/index.ts';
import { describeError } from '../api.ts';
import { Problem, useLoad } from './admin-common.tsx';

export function Roles({ api, tenant, canManage, canListApps }: { api: ChatClient; tenant: string; canManage: boolean; canListApps: boolean }) {
  const [appId, setAppId] = useState('');
  const [apps] = useLoad(
    () => (canListApps ? ok(api.GET('/tenants/{tenant_id}/admin/applications', { params: { path: { tenant_id: tenant } } })).then((r) => r.items.filter((a) => a.chat_enabled)) : Promise.resolve([] as AdminApplication[])),
    [tenant],
  );
  const load = () =>
    ok(api.GET('/tenants/{tenant_id}/admin/role-permissions', { params: { path: { tenant_id: tenant }, query: appId === '' ? {} : { application_id: appId } } }));
  const [mapping, error, setMapping] = useLoad<RoleMapping>(load, [tenant, appId]);
  return (
    <section aria-labelledby="roles">
      <h2 id="roles">Roles and permissions</h2>
      <p class="muted">Roles and who holds them are managed in the identity provider; here you choose what each role may do in chat.</p>
      <label>
        Mapping
        <select value={appId} onChange={(e) => setAppId((e.target as HTMLSelectElement).value)}>
          <option value="">Whole tenant</option>
          {(apps ?? []).map((a) => (
            <option key={a.application_id} value={a.application_id}>
              Application: {a.name}
            </option>
          ))}
        </select>
      </label>
      <Problem text={error} />
      {mapping && mapping.items.map((role) => <RoleEditor key={`${appId}/${role.role_id}`} api={api} tenant={tenant} appId={appId} mapping={mapping} role={role} canManage={canManage} onSaved={setMapping} />)}
    </section>
  );
}

function RoleEditor(props: { api: ChatClient; tenant: string; appId: string; mapping: RoleMapping; role: RoleMapping['items'][number]; canManage: boolean; onSaved: (m: RoleMapping) => void }) {
  const { role } = props;
  const [chosen, setChosen] = useState(new Set(role.capabilities));
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const editable = props.canManage && !role.locked;
  // administration.* act through tenant roles only: an application role is never offered them.
  const offered = props.mapping.available_capabilities.filter((c) => role.role_scope === 'tenant' || !c.key.startsWith('administration.'));
  const save = (capabilities: string[] | null) => {
    setError(null);
    ok(props.api.PATCH('/tenants/{tenant_id}/admin/role-permissions', {
      params: { path: { tenant_id: props.tenant } },
      body: { role_id: role.role_id, capabilities, application_id: props.appId === '' ? null : props.appId },
    })).then(
      (m) => {
        setStatus(capabilities === null ? 'Restored the identity provider’s list.' : 'Saved.');
        const updated = m.items.find((r) => r.role_id === role.role_id);
        if (updated) setChosen(new Set(updated.capabilities));
        props.onSaved(m);
      },
      (e: unknown) => setError(describeError(e)),
    );
  };
  const title = role.display_name ?? role.role;
  return (
    <form
      class="role"
      aria-label={`Role ${title}`}
      onSubmit={(e) => {
        e.preventDefault();
        save(offered.map((c) => c.key).filter((k) => chosen.has(k)));
      }}
    >
      <fieldset disabled={!editable}>
        <legend>
          {title} <span class="muted">({role.role}, {role.role_scope === 'tenant' ? 'tenant role' : 'application role'})</span>
          {role.locked && <span class="pill">Locked: holds every permission</span>}
        </legend>
        <div class="caps">
          {offered.map((c) => (
            <label key={c.key} class="inline" title={c.description}>
              <input
                type="checkbox"
                checked={role.locked || chosen.has(c.key)}
                onChange={(e) => {
                  const next = new Set(chosen);
                  if ((e.target as HTMLInputElement).checked) next.add(c.key);
                  else next.delete(c.key);
                  setChosen(next);
                  setStatus(null);
                }}
              />
              {c.key}
            </label>
          ))}
        </div>
        {editable && (
          <div class="row">
            <button class="primary" type="submit">
              Save {title}
            </button>
            <button type="button" onClick={() => save(null)}>
              Restore defaults of {title}
            </button>
          </div>
        )}
      </fieldset>
      {status && (
        <p role="status" class="ok">
          {status}
        </p>
      )}
      <Problem text={error} />
    </form>
  );
}

