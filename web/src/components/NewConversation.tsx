/** Starting a conversation: direct (one person), group or channel (a name), members by lookup. */
import { useState } from 'preact/hooks';
import { ok, type ChatClient, type Conversation, type UserSummary } from '../../../client/index.ts';
import { describeError } from '../api.ts';
import { UserLookup } from './UserLookup.tsx';

type Kind = 'DIRECT' | 'GROUP' | 'CHANNEL';

export function NewConversation(props: {
  api: ChatClient;
  ctx: { tenant_id: string; application_id: string };
  caps: string[];
  onClose: () => void;
  onCreated: (c: Conversation) => void;
}) {
  const kinds: Kind[] = ['DIRECT', ...(props.caps.includes('groups.create') ? (['GROUP'] as Kind[]) : []), ...(props.caps.includes('channels.create') ? (['CHANNEL'] as Kind[]) : [])];
  const [type, setType] = useState<Kind>('DIRECT');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [members, setMembers] = useState<UserSummary[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const needsName = type !== 'DIRECT';
  const valid = (type === 'DIRECT' ? members.length === 1 : true) && (!needsName || name.trim() !== '');

  const create = () => {
    setBusy(true);
    ok(props.api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations', {
      params: { path: props.ctx },
      body: Object.assign(
        { type, member_user_ids: members.map((m) => m.user_id) },
        needsName ? { name: name.trim() } : {},
        needsName && description.trim() !== '' ? { description: description.trim() } : {},
      ),
    })).then(props.onCreated, (e: unknown) => {
      setBusy(false);
      setError(describeError(e));
    });
  };

  return (
    <section class="panel" aria-labelledby="new-conv-title">
      <h2 id="new-conv-title">New conversation</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (valid) create();
        }}
      >
        <fieldset>
          <legend>Kind</legend>
          {kinds.map((k) => (
            <label key={k} class="inline">
              <input type="radio" name="kind" value={k} checked={type === k} onChange={() => setType(k)} />
              {k === 'DIRECT' ? 'Direct' : k === 'GROUP' ? 'Group' : 'Channel'}
            </label>
          ))}
        </fieldset>
        {needsName && (
          <>
            <label>
              Name
              <input value={name} required maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            </label>
            <label>
              Description
              <input value={description} maxLength={1000} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
            </label>
          </>
        )}
        {(type !== 'DIRECT' || members.length === 0) && (
          <UserLookup api={props.api} ctx={props.ctx} label={type === 'DIRECT' ? 'Person' : 'Add people'} exclude={members.map((m) => m.user_id)} onPick={(u) => setMembers(type === 'DIRECT' ? [u] : [...members, u])} />
        )}
        {members.length > 0 && (
          <ul class="chips" aria-label="Chosen people">
            {members.map((m) => (
              <li key={m.user_id}>
                {m.display_name}{' '}
                <button type="button" aria-label={`Remove ${m.display_name}`} onClick={() => setMembers(members.filter((x) => x.user_id !== m.user_id))}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        {error && (
          <p class="alert" role="alert">
            {error}
          </p>
        )}
        <div class="row">
          <button class="primary" type="submit" disabled={!valid || busy}>
            Create
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
