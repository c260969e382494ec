/**
 * Writing a message: Enter sends, Shift+Enter starts a line; "@" followed by two letters looks up
 * people to mention; typing is announced at most every 3 s; a reply shows what it answers.
 */
import { useRef, useState } from 'preact/hooks';
import { ok, type ChatClient, type Message } from '../../../client/index.ts';
import { describeError } from '../api.ts';
import { useUserLookup } from './UserLookup.tsx';

const TYPING_EVERY_MS = 3_000;
type Path = { tenant_id: string; application_id: string; conversation_id: string };

export function Composer(props: {
  api: ChatClient;
  ctx: { tenant_id: string; application_id: string };
  path: Path;
  canSend: boolean;
  archived: boolean;
  replyTo: Message | null;
  onCancelReply: () => void;
  onSent: (m: Message) => void;
  onError: (e: string) => void;
}) {
  const { api, path } = props;
  const [text, setText] = useState('');
  const [mentions, setMentions] = useState<string[]>([]);
  const [sending, setSending] = useState(false);
  const lastTyping = useRef(0);
  const box = useRef<HTMLTextAreaElement>(null);
  const word = /(?:^|\s)@([\w.-]{2,})$/.exec(text)?.[1] ?? '';
  const suggestions = useUserLookup(api, props.ctx, word);

  const send = () => {
    const body = text.trim();
    if (body === '' || sending) return;
    setSending(true);
    const mentioned = mentions.filter((u) => body.includes(`@${u}`));
    ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', {
      params: { path },
      body: Object.assign({ body }, mentioned.length > 0 ? { mentioned_user_ids: mentioned } : {}, props.replyTo ? { reply_to_message_id: props.replyTo.message_id } : {}),
    })).then(
      (m) => {
        setText('');
        setMentions([]);
        setSending(false);
        props.onSent(m);
        box.current?.focus();
      },
      (e: unknown) => {
        setSending(false);
        props.onError(describeError(e));
      },
    );
  };

  const onInput = (value: string) => {
    setText(value);
    if (Date.now() - lastTyping.current > TYPING_EVERY_MS && value !== '') {
      lastTyping.current = Date.now();
      void api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/typing', { params: { path } }).catch(() => undefined);
    }
  };

  const disabled = !props.canSend || props.archived;
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      {props.replyTo && (
        <p class="replying">
          Replying to {props.replyTo.sender?.display_name ?? 'System'}: “{props.replyTo.body.slice(0, 80)}”{' '}
          <button type="button" onClick={props.onCancelReply}>
            Cancel reply
          </button>
        </p>
      )}
      {suggestions.length > 0 && (
        <ul class="suggestions" aria-label="Mention">
          {suggestions.map((u) => (
            <li key={u.user_id}>
              <button
                type="button"
                onClick={() => {
                  setText(text.replace(/@[\w.-]{2,}$/, `@${u.user_id} `));
                  setMentions([...new Set([...mentions, u.user_id])]);
                  box.current?.focus();
                }}
              >
                Mention {u.display_name} <span class="muted">({u.user_id})</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <label class="grow">
        <span class="sr-only">Message</span>
        <textarea
          ref={box}
          rows={2}
          value={text}
          disabled={disabled}
          placeholder={props.archived ? 'This conversation is archived' : props.canSend ? 'Write a message — Enter sends, Shift+Enter for a new line' : 'You may not send messages here'}
          onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              send();
            }
          }}
        />
      </label>
      <button class="primary" type="submit" disabled={disabled || sending || text.trim() === ''}>
        Send
      </button>
    </form>
  );
}
