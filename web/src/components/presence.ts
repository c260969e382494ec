/** Presence of the people shown: asked for every 30 s (presence is per account, per tenant). */
import { useEffect, useState } from 'preact/hooks';
import { ok, type ChatClient } from '../../../client/index.ts';

const POLL_MS = 30_000;

export function usePresence(api: ChatClient, tenant: string, userIds: string[]): Map<string, string> {
  const [status, setStatus] = useState(new Map<string, string>());
  const key = userIds.join(',');
  useEffect(() => {
    if (key === '') return;
    const load = () =>
      ok(api.GET('/tenants/{tenant_id}/presence', { params: { path: { tenant_id: tenant }, query: { user_ids: key } } })).then(
        (r) => setStatus(new Map(r.items.map((p) => [p.user_id, p.status]))),
        () => undefined,
      );
    void load();
    const t = setInterval(load, POLL_MS);
    return () => clearInterval(t);
  }, [api, tenant, key]);
  return status;
}
