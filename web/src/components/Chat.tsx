/**
 * Chat in one application: the conversation list (by activity, unread marked), new
 * conversations, public channels to join, the open conversation; one realtime stream feeding
 * them all, and the presence heartbeat.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ok, type ChatClient, type ChatEvent, type Conversation } from '../../../client/index.ts';
import { RealtimeConnection, type RealtimeStatus } from '../../../client/realtime.ts';
import { describeError } from '../api.ts';
import { go } from '../route.ts';
import { ConversationView } from './ConversationView.tsx';
import { NewConversation } from './NewConversation.tsx';
import { usePresence } from './presence.ts';

export type Listener = (e: ChatEvent) => void;
/** Who is looking: known from the session, so chat starts without waiting for /me. */
export type Viewer = { user_id: string };

/** How long a heartbeat lasts is the server's business; every 25 s keeps the default 60 s window covered. */
const HEARTBEAT_MS = 25_000;

export function Chat({ api, me, tenant, app, conversationId }: { api: ChatClient; me: Viewer; tenant: string; app: string; conversationId: string | null }) {
  const ctx = useMemo(() => ({ tenant_id: tenant, application_id: app }), [tenant, app]);
  const [conversations, setConversations] = useState<Conversation[] | null>(null);
  const [caps, setCaps] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [status, setStatus] = useState<RealtimeStatus>('connecting');
  const listeners = useRef(new Set<Listener>());
  const viewing = useRef<string | null>(null);
  viewing.current = conversationId;
  const stream = useRef<RealtimeConnection | null>(null);

  const reload = () =>
    ok(api.GET('/tenants/{tenant_id}/applications/{application_id}/conversations', { params: { path: ctx, query: { limit: '100' } } })).then(
      (page) => setConversations(page.items),
      (e: unknown) => setError(describeError(e)),
    );

  useEffect(() => {
    void reload();
    ok(api.GET('/tenants/{tenant_id}/applications/{application_id}/me/capabilities', { params: { path: ctx } })).then(
      (c) => setCaps(c.capabilities),
      (e: unknown) => setError(describeError(e)),
    );
    const beat = () => void api.POST('/tenants/{tenant_id}/presence/heartbeat', { params: { path: { tenant_id: tenant } } }).catch(() => undefined);
    beat();
    const timer = setInterval(beat, HEARTBEAT_MS);
    return () => clearInterval(timer);
  }, [api, ctx]);

  const open = conversations?.find((c) => c.conversation_id === conversationId) ?? null;
  const viewingPublic = open !== null && open.type === 'CHANNEL' && open.my_role == null ? open.conversation_id : null;

  // One stream per application, resumed (never restarted) when its credential must change: a
  // PUBLIC channel viewed without membership is added to the credential.
  const viewedPublic = useRef<string | null>(viewingPublic);
  viewedPublic.current = viewingPublic;
  useEffect(() => {
    const conn = new RealtimeConnection({
      credential: () =>
        ok(api.GET('/tenants/{tenant_id}/applications/{application_id}/notifications/realtime-token', {
          params: { path: ctx, query: viewedPublic.current ? { conversation_id: viewedPublic.current } : {} },
        })),
      onEvent: (e) => {
        if (e.application_id !== app) return;
        onListEvent(e);
        for (const l of listeners.current) l(e);
      },
      onReset: () => {
        void reload();
        for (const l of listeners.current) l({ type: 'reset' } as unknown as ChatEvent);
      },
      onStatus: setStatus,
    });
    stream.current = conn;
    conn.start();
    return () => conn.stop();
  }, [api, ctx]);
  const firstView = useRef(true);
  useEffect(() => {
    if (firstView.current) {
      firstView.current = false;
      return;
    }
    stream.current?.refresh();
  }, [viewingPublic]);

  function onListEvent(e: ChatEvent): void {
    switch (e.type) {
      case 'message.created':
        setConversations((list) => {
          if (!list) return list;
          const i = list.findIndex((c) => c.conversation_id === e.conversation_id);
          if (i < 0) {
            void reload();
            return list;
          }
          const c = list[i] as Conversation;
          const mine = e.data.message.sender_user_id === me.user_id;
          const updated: Conversation = Object.assign({}, c, {
            last_activity_at: e.occurred_at,
            has_unread: mine || viewing.current === c.conversation_id ? c.has_unread : true,
          });
          return [updated, ...list.slice(0, i), ...list.slice(i + 1)];
        });
        return;
      case 'read.updated':
        if (e.data.user_id === me.user_id) setConversations((list) => list?.map((c) => (c.conversation_id === e.conversation_id ? Object.assign({}, c, { has_unread: false }) : c)) ?? list);
        return;
      case 'member.added':
        if (e.data.member.user_id === me.user_id) {
          void reload();
          stream.current?.refresh(); // a CHANNEL joined: the next credential covers it
        }
        return;
      case 'member.removed':
        if (e.data.member.user_id === me.user_id) void reload();
        return;
      case 'conversation.created':
      case 'conversation.updated':
      case 'conversation.archived':
      case 'conversation.unarchived':
      case 'conversation.deleted':
        void reload();
        return;
      default:
        return;
    }
  }

  const mine = conversations?.filter((c) => c.my_role != null) ?? [];
  const publicChannels = conversations?.filter((c) => c.type === 'CHANNEL' && c.my_role == null) ?? [];
  const memberIds = useMemo(() => [...new Set(mine.flatMap((c) => (c.members ?? []).map((m) => m.user_id)))].filter((u) => u !== me.user_id).sort(), [conversations]);
  const presence = usePresence(api, tenant, memberIds);
  const canCreate = caps.includes('conversations.create');

  return (
    <div class="chat">
      <nav class="sidebar" aria-label="Conversations">
        <div class="sidebar-head">
          <h2>Conversations</h2>
          <span class={`live live-${status}`} role="status" aria-label={`Live updates: ${status}`} title={`Live updates: ${status}`} />
        </div>
        {canCreate && (
          <button class="primary wide" onClick={() => setCreating(true)}>
            New conversation
          </button>
        )}
        {error && (
          <p class="alert" role="alert">
            {error}
          </p>
        )}
        {conversations === null ? (
          <p role="status">Loading…</p>
        ) : (
          <ul class="conversations" aria-label="Your conversations">
            {mine.map((c) => (
              <li key={c.conversation_id}>
                <a
                  href={`#/t/${encodeURIComponent(tenant)}/${encodeURIComponent(app)}/c/${encodeURIComponent(c.conversation_id)}`}
                  aria-current={c.conversation_id === conversationId ? 'page' : undefined}
                  class={c.has_unread ? 'unread' : undefined}
                >
                  {c.type === 'DIRECT' && <PresenceDot online={presence.get(otherOf(c, me.user_id) ?? '') === 'online'} />}
                  <span class="title">{titleOf(c, me.user_id)}</span>
                  <span class="kind">{c.type.toLowerCase()}</span>
                  {c.has_unread && <span class="badge">unread</span>}
                </a>
              </li>
            ))}
            {mine.length === 0 && <li class="empty">No conversations yet.</li>}
          </ul>
        )}
        {publicChannels.length > 0 && (
          <>
            <h2>Public channels</h2>
            <ul class="conversations" aria-label="Public channels">
              {publicChannels.map((c) => (
                <li key={c.conversation_id}>
                  <a href={`#/t/${encodeURIComponent(tenant)}/${encodeURIComponent(app)}/c/${encodeURIComponent(c.conversation_id)}`} aria-current={c.conversation_id === conversationId ? 'page' : undefined}>
                    <span class="title"># {c.name}</span>
                    <span class="kind">{c.member_count} members</span>
                  </a>
                </li>
              ))}
            </ul>
          </>
        )}
      </nav>
      <main class="main">
        {creating && (
          <NewConversation
            api={api}
            ctx={ctx}
            caps={caps}
            onClose={() => setCreating(false)}
            onCreated={(c) => {
              setCreating(false);
              void reload().then(() => go({ view: 'chat', tenant, app, conversation: c.conversation_id }));
            }}
          />
        )}
        {!creating && open && (
          <ConversationView
            key={open.conversation_id}
            api={api}
            ctx={ctx}
            me={me}
            conversation={open}
            caps={caps}
            presence={presence}
            subscribe={(l) => {
              listeners.current.add(l);
              return () => listeners.current.delete(l);
            }}
            onJoined={() => {
              void reload();
              stream.current?.refresh();
            }}
            onRead={() => setConversations((list) => list?.map((c) => (c.conversation_id === open.conversation_id ? Object.assign({}, c, { has_unread: false }) : c)) ?? list)}
          />
        )}
        {!creating && !open && <p class="empty">{conversationId && conversations ? 'This conversation is not available.' : 'Choose a conversation.'}</p>}
      </main>
    </div>
  );
}

export function PresenceDot({ online }: { online: boolean }) {
  return <span class={online ? 'dot online' : 'dot'} role="img" aria-label={online ? 'online' : 'offline'} />;
}

export function otherOf(c: Conversation, me: string): string | undefined {
  return c.members?.find((m) => m.user_id !== me)?.user_id;
}

export function titleOf(c: Conversation, me: string): string {
  if (c.type === 'CHANNEL') return `# ${c.name ?? ''}`;
  if (c.name) return c.name;
  const others = (c.members ?? []).filter((m) => m.user_id !== me).map((m) => m.display_name);
  return others.length > 0 ? others.join(', ') : 'Just you';
}
