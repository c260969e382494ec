/** A search box over the application's users (GET .../users): type two letters, pick from the list. */
import { useEffect, useState } from 'preact/hooks';
import { ok, type ChatClient, type UserSummary } from '../../../client/index.ts';

export function useUserLookup(api: ChatClient, ctx: { tenant_id: string; application_id: string }, query: string): UserSummary[] {
  const [found, setFound] = useState<UserSummary[]>([]);
  useEffect(() => {
    const q = query.trim();
    if (q.length < 2) {
      setFound([]);
      return;
    }
    let live = true;
    const t = setTimeout(() => {
      ok(api.GET('/tenants/{tenant_id}/applications/{application_id}/users', { params: { path: ctx, query: { query: q, limit: '8' } } })).then(
        (r) => live && setFound(r.items),
        () => live && setFound([]),
      );
    }, 200);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [query]);
  return found;
}

export function UserLookup(props: {
  api: ChatClient;
  ctx: { tenant_id: string; application_id: string };
  label: string;
  exclude: string[];
  onPick: (u: UserSummary) => void;
}) {
  const [query, setQuery] = useState('');
  const found = useUserLookup(props.api, props.ctx, query).filter((u) => !props.exclude.includes(u.user_id));
  return (
    <div class="lookup">
      <label>
        {props.label}
        <input type="search" value={query} autocomplete="off" placeholder="Type a name or id" onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
      </label>
      {found.length > 0 && (
        <ul class="suggestions" aria-label="Matching people">
          {found.map((u) => (
            <li key={u.user_id}>
              <button
                type="button"
                onClick={() => {
                  props.onPick(u);
                  setQuery('');
                }}
              >
                {u.display_name} <span class="muted">({u.user_id})</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
