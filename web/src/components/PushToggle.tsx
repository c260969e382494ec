/** "Enable notifications": the opt-in has to come from a click. */
import { useState } from 'preact/hooks';
import type { ChatClient } from '../../../client/index.ts';
import { enablePush, pushEnabledFor, pushSupported } from '../push.ts';

export function PushToggle({ api, tenant }: { api: ChatClient; tenant: string }) {
  const [on, setOn] = useState(() => pushEnabledFor(tenant));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!pushSupported()) return null;
  if (on) return <span class="pill" role="status">Notifications on</span>;
  return (
    <>
      <button
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setError(null);
          enablePush(api, tenant).then(
            () => setOn(true),
            (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
          ).finally(() => setBusy(false));
        }}
      >
        Enable notifications
      </button>
      {error && (
        <span class="alert inline" role="alert">
          {error}
        </span>
      )}
    </>
  );
}
