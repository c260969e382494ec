/**
 * One conversation: its history newest at the bottom, older pages loaded when the top comes into
 * view (cursor pages), live events applied, read state kept, typing shown, and the composer.
 * Non-members of a PUBLIC channel see it and a Join button.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { done, ok, type ChatClient, type ChatEvent, type Conversation, type Message } from '../../../client/index.ts';
import { describeError } from '../api.ts';
import { PresenceDot, titleOf, type Listener, type Viewer } from './Chat.tsx';
import { Composer } from './Composer.tsx';
import { MessageItem } from './MessageItem.tsx';

type Ctx = { tenant_id: string; application_id: string };
const PAGE = '30';
const TYPING_SHOWN_MS = 5_000;

export function ConversationView(props: {
  api: ChatClient;
  ctx: Ctx;
  me: Viewer;
  conversation: Conversation;
  caps: string[];
  presence: Map<string, string>;
  subscribe: (l: Listener) => () => void;
  onJoined: () => void;
  onRead: () => void;
}) {
  const { api, ctx, me, conversation: c, caps } = props;
  const path = { tenant_id: ctx.tenant_id, application_id: ctx.application_id, conversation_id: c.conversation_id };
  const [messages, setMessages] = useState<Message[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [replyTo, setReplyTo] = useState<Message | null>(null);
  const [typing, setTyping] = useState(new Map<string, number>());
  const scroller = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  /** Scroll height before older messages were prepended, to keep the view where it was. */
  const anchor = useRef<number | null>(null);
  const stick = useRef(true);
  const member = c.my_role != null;

  const markRead = () => {
    if (!member) return;
    void api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/read', { params: { path }, body: {} }).then(() => props.onRead(), () => undefined);
  };

  const loadLatest = () =>
    ok(api.GET('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', { params: { path, query: { limit: PAGE } } })).then(
      (page) => {
        setMessages(page.items.slice().reverse());
        setCursor(page.next_cursor);
        setLoaded(true);
        stick.current = true;
        markRead();
      },
      (e: unknown) => setError(describeError(e)),
    );

  useEffect(() => {
    void loadLatest();
  }, [c.conversation_id]);

  const loadOlder = () => {
    if (cursor === null || loadingOlder) return;
    setLoadingOlder(true);
    ok(api.GET('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', { params: { path, query: { limit: PAGE, before: cursor } } })).then(
      (page) => {
        anchor.current = scroller.current?.scrollHeight ?? null;
        setMessages((list) => dedupe([...page.items.slice().reverse(), ...list]));
        setCursor(page.next_cursor);
        setLoadingOlder(false);
      },
      (e: unknown) => {
        setError(describeError(e));
        setLoadingOlder(false);
      },
    );
  };

  // Infinite scroll: the sentinel above the oldest message coming into view loads the next page.
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !loaded) return;
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && loadOlder(), { root: scroller.current, rootMargin: '200px 0px 0px 0px' });
    io.observe(el);
    return () => io.disconnect();
  }, [loaded, cursor, loadingOlder]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (anchor.current !== null) {
      el.scrollTop += el.scrollHeight - anchor.current;
      anchor.current = null;
    } else if (stick.current) {
      el.scrollTop = el.scrollHeight;
    }
  }, [messages]);

  useEffect(
    () =>
      props.subscribe((e: ChatEvent) => {
        if ((e.type as string) === 'reset') {
          void loadLatest();
          return;
        }
        if (e.conversation_id !== c.conversation_id) return;
        switch (e.type) {
          case 'message.created':
            setMessages((list) => dedupe([...list, withMyReactions(e.data.message, [], me.user_id)]));
            setTyping((t) => without(t, e.data.message.sender_user_id ?? ''));
            if (document.visibilityState === 'visible') markRead();
            return;
          case 'message.updated':
          case 'message.deleted':
            setMessages((list) => list.map((m) => (m.message_id === e.data.message.message_id ? withMyReactions(e.data.message, m.reactions, me.user_id) : m)));
            return;
          case 'reaction.added':
          case 'reaction.removed':
            setMessages((list) =>
              list.map((m) => {
                if (m.message_id !== e.data.message_id) return m;
                const mineBefore = new Set(m.reactions.filter((r) => r.reacted_by_me).map((r) => r.emoji));
                if (e.data.user_id === me.user_id) {
                  if (e.type === 'reaction.added') mineBefore.add(e.data.emoji);
                  else mineBefore.delete(e.data.emoji);
                }
                return Object.assign({}, m, { reactions: e.data.reactions.map((r) => ({ emoji: r.emoji, count: r.count, reacted_by_me: mineBefore.has(r.emoji) })) });
              }),
            );
            return;
          case 'typing':
            if (e.data.user_id !== me.user_id) setTyping((t) => new Map(t).set(e.data.user_id, Date.now() + TYPING_SHOWN_MS));
            return;
          default:
            return;
        }
      }),
    [c.conversation_id],
  );

  // Typing indicators fade on their own.
  useEffect(() => {
    if (typing.size === 0) return;
    const t = setInterval(() => setTyping((m) => new Map([...m].filter(([, until]) => until > Date.now()))), 1000);
    return () => clearInterval(t);
  }, [typing.size > 0]);

  const join = () =>
    ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members', { params: { path }, body: { user_id: me.user_id } })).then(
      () => props.onJoined(),
      (e: unknown) => setError(describeError(e)),
    );
  const leave = () =>
    done(api.DELETE('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members/{user_id}', { params: { path: Object.assign({ user_id: me.user_id }, path) } })).then(
      () => props.onJoined(),
      (e: unknown) => setError(describeError(e)),
    );

  const names = new Map<string, string>((c.members ?? []).map((m) => [m.user_id, m.display_name]));
  for (const m of messages) if (m.sender_user_id && m.sender) names.set(m.sender_user_id, m.sender.display_name);
  const typists = [...typing.keys()].map((u) => names.get(u) ?? u);
  const byId = new Map(messages.map((m) => [m.message_id, m]));

  return (
    <section class="conversation" aria-label={titleOf(c, me.user_id)}>
      <header class="conv-head">
        <h2>{titleOf(c, me.user_id)}</h2>
        {c.type !== 'CHANNEL' && (
          <ul class="members" aria-label="Members">
            {(c.members ?? []).map((m) => (
              <li key={m.user_id}>
                <PresenceDot online={m.user_id === me.user_id || props.presence.get(m.user_id) === 'online'} />
                {m.display_name}
              </li>
            ))}
          </ul>
        )}
        {c.type === 'CHANNEL' && <span class="kind">{c.member_count} members</span>}
        {c.type === 'CHANNEL' && !member && (
          <button class="primary" onClick={() => void join()}>
            Join channel
          </button>
        )}
        {c.type !== 'DIRECT' && member && <button onClick={() => void leave()}>Leave</button>}
      </header>
      {error && (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      <div
        class="messages"
        ref={scroller}
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        <div ref={sentinel} class="sentinel">
          {loaded && cursor === null ? <p class="history-start">Start of the conversation</p> : loadingOlder ? <p role="status">Loading older messages…</p> : null}
        </div>
        <div role="log" aria-label="Messages" aria-live="polite">
        <ol>
          {messages.map((m) => (
            <MessageItem
              key={m.message_id}
              api={api}
              path={path}
              me={me}
              message={m}
              replyTarget={m.reply_to_message_id ? (byId.get(m.reply_to_message_id) ?? null) : null}
              caps={caps}
              member={member}
              onReply={() => setReplyTo(m)}
              onChanged={(updated) => setMessages((list) => list.map((x) => (x.message_id === updated.message_id ? updated : x)))}
              onError={setError}
            />
          ))}
        </ol>
        </div>
      </div>
      <p class="typing" aria-live="polite">
        {typists.length > 0 ? `${typists.join(', ')} ${typists.length > 1 ? 'are' : 'is'} typing…` : ''}
      </p>
      {member ? (
        <Composer
          api={api}
          ctx={ctx}
          path={path}
          canSend={caps.includes('messages.send')}
          archived={c.status === 'ARCHIVED'}
          replyTo={replyTo}
          onCancelReply={() => setReplyTo(null)}
          onSent={(m) => {
            setReplyTo(null);
            stick.current = true;
            setMessages((list) => dedupe([...list, m]));
          }}
          onError={setError}
        />
      ) : (
        <p class="empty">Join the channel to write here.</p>
      )}
    </section>
  );
}

/** A message once, in order of seq: live events, sends and pages may meet. */
function dedupe(list: Message[]): Message[] {
  const seen = new Map<string, Message>();
  for (const m of list) seen.set(m.message_id, m);
  return [...seen.values()].sort((a, b) => a.seq - b.seq);
}

function withMyReactions(m: Omit<Message, 'reactions'> & { reactions: { emoji: string; count: number }[] }, before: Message['reactions'], _me: string): Message {
  const mine = new Set(before.filter((r) => r.reacted_by_me).map((r) => r.emoji));
  return Object.assign({}, m, { reactions: m.reactions.map((r) => ({ emoji: r.emoji, count: r.count, reacted_by_me: mine.has(r.emoji) })) });
}

function without<K, V>(m: Map<K, V>, k: K): Map<K, V> {
  if (!m.has(k)) return m;
  const n = new Map(m);
  n.delete(k);
  return n;
}
