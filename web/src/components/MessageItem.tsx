/** One message: sender, time, reply quote, text with mentions, attachments as links, reactions, actions. */
import { useState } from 'preact/hooks';
import { done, ok, type ChatClient, type Message } from '../../../client/index.ts';
import { describeError } from '../api.ts';
import type { Viewer } from './Chat.tsx';

const QUICK_REACTIONS = ['👍', '❤️', '😂', '🎉'];
type Path = { tenant_id: string; application_id: string; conversation_id: string };

export function MessageItem(props: {
  api: ChatClient;
  path: Path;
  me: Viewer;
  message: Message;
  replyTarget: Message | null;
  caps: string[];
  member: boolean;
  onReply: () => void;
  onChanged: (m: Message) => void;
  onError: (e: string) => void;
}) {
  const { api, message: m, me } = props;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(m.body);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [picking, setPicking] = useState(false);
  const deleted = m.status === 'DELETED';
  const own = m.sender_user_id === me.user_id;
  const senderName = m.sender?.display_name ?? 'System';
  const canEdit = own && props.caps.includes('messages.update') && !deleted;
  const canDelete = !deleted && ((own && props.caps.includes('messages.update')) || props.caps.includes('messages.delete'));
  const path = Object.assign({ message_id: m.message_id }, props.path);
  const fail = (e: unknown) => props.onError(describeError(e));

  const react = (emoji: string, on: boolean) => {
    setPicking(false);
    const p = { params: { path: Object.assign({ emoji }, path) } };
    const call = on
      ? ok(api.PUT('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}/reactions/{emoji}', p))
      : ok(api.DELETE('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}/reactions/{emoji}', p));
    call.then((r) => props.onChanged(Object.assign({}, m, { reactions: r.reactions })), fail);
  };
  const save = () =>
    ok(api.PATCH('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}', { params: { path }, body: { body: draft } })).then((u) => {
      setEditing(false);
      props.onChanged(Object.assign({}, u, { reactions: m.reactions }));
    }, fail);
  const remove = () =>
    done(api.DELETE('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}', { params: { path } })).then(() => {
      setConfirmDelete(false);
      props.onChanged(Object.assign({}, m, { status: 'DELETED' as const, body: '', attachments: [], reactions: [] }));
    }, fail);

  return (
    <li class={own ? 'message own' : 'message'} aria-label={`${senderName}: ${deleted ? 'message deleted' : m.body}`}>
      <div class="meta">
        <span class="sender">{senderName}</span>
        <time dateTime={m.created_at}>{new Date(m.created_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}</time>
        {m.status === 'EDITED' && <span class="edited">(edited)</span>}
      </div>
      {m.reply_to_message_id && (
        <blockquote class="reply-quote">
          {props.replyTarget ? `${props.replyTarget.sender?.display_name ?? 'System'}: ${props.replyTarget.status === 'DELETED' ? 'message deleted' : props.replyTarget.body.slice(0, 120)}` : 'Reply to an earlier message'}
        </blockquote>
      )}
      {deleted ? (
        <p class="tombstone">Message deleted</p>
      ) : editing ? (
        <div class="edit">
          <label>
            <span class="sr-only">Edit message</span>
            <textarea value={draft} onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)} rows={2} />
          </label>
          <button class="primary" onClick={() => void save()}>
            Save
          </button>
          <button onClick={() => setEditing(false)}>Cancel</button>
        </div>
      ) : (
        <p class="body">{renderBody(m.body, m.mentioned_user_ids)}</p>
      )}
      {!deleted && m.attachments.length > 0 && (
        <ul class="attachments" aria-label="Attachments">
          {m.attachments.map((a) => (
            <li key={a.file_id}>
              {a.url ? (
                <a href={a.url} rel="noopener noreferrer" target="_blank">
                  {a.name}
                </a>
              ) : (
                <span>{a.name}</span>
              )}{' '}
              <span class="size">({formatSize(a.size)})</span>
            </li>
          ))}
        </ul>
      )}
      {!deleted && (
        <div class="reactions" role="group" aria-label="Reactions">
          {m.reactions.map((r) => (
            <button key={r.emoji} class="reaction" aria-pressed={r.reacted_by_me} aria-label={`${r.emoji} ${r.count}`} onClick={() => react(r.emoji, !r.reacted_by_me)} disabled={!props.member}>
              {r.emoji} {r.count}
            </button>
          ))}
        </div>
      )}
      {!deleted && props.member && (
        <div class="actions">
          <button onClick={props.onReply}>Reply</button>
          <button aria-expanded={picking} onClick={() => setPicking(!picking)}>
            React
          </button>
          {picking &&
            QUICK_REACTIONS.map((e) => (
              <button key={e} aria-label={`React with ${e}`} onClick={() => react(e, true)}>
                {e}
              </button>
            ))}
          {canEdit && !editing && (
            <button
              onClick={() => {
                setDraft(m.body);
                setEditing(true);
              }}
            >
              Edit
            </button>
          )}
          {canDelete && !confirmDelete && <button onClick={() => setConfirmDelete(true)}>Delete</button>}
          {confirmDelete && (
            <>
              <button class="danger" onClick={() => void remove()}>
                Confirm delete
              </button>
              <button onClick={() => setConfirmDelete(false)}>Keep</button>
            </>
          )}
        </div>
      )}
    </li>
  );
}

function renderBody(body: string, mentions: string[]) {
  if (mentions.length === 0) return body;
  const re = new RegExp(`(@(?:${mentions.map((u) => u.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')}))(?![\\w.-])`, 'g');
  return body.split(re).map((part, i) => (i % 2 === 1 ? <mark class="mention" key={i}>{part}</mark> : part));
}

function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
