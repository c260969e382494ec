/** Signed out (the sign-in page) or signed in (the shell); handles the return from the IdP. */
import { useEffect, useState } from 'preact/hooks';
import { completeSignIn, savedSession, SessionKeeper, SignInError, startSignIn } from '../auth.ts';
import { describeError } from '../api.ts';
import { Shell } from './Shell.tsx';

export function App() {
  const [keeper, setKeeper] = useState<SessionKeeper | null>(null);
  const [phase, setPhase] = useState<'loading' | 'out' | 'in'>('loading');
  const [error, setError] = useState<string | null>(null);

  const signedIn = (s: NonNullable<ReturnType<typeof savedSession>>) => {
    const k = new SessionKeeper(s, (reason) => {
      setKeeper(null);
      setError(reason);
      setPhase('out');
    });
    setKeeper(k);
    setPhase('in');
  };

  useEffect(() => {
    completeSignIn().then(
      (s) => {
        const session = s ?? savedSession();
        if (session) signedIn(session);
        else setPhase('out');
      },
      (err: unknown) => {
        setError(err instanceof SignInError ? `Sign-in failed: ${err.message} (${err.code})` : `Sign-in failed: ${describeError(err)}`);
        setPhase('out');
      },
    );
  }, []);

  if (phase === 'loading') return <p class="centered" role="status">Loading…</p>;
  if (phase === 'in' && keeper) {
    return (
      <Shell
        keeper={keeper}
        onSignedOut={() => {
          setKeeper(null);
          setError(null);
          setPhase('out');
        }}
      />
    );
  }
  return <SignIn error={error} />;
}

function SignIn({ error }: { error: string | null }) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  return (
    <main class="signin">
      <h1>Chat</h1>
      <p>Conversations for the people of your organisation.</p>
      {error && (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      {failure && (
        <p class="alert" role="alert">
          {failure}
        </p>
      )}
      <button
        class="primary"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          startSignIn().catch((err: unknown) => {
            setFailure(describeError(err));
            setBusy(false);
          });
        }}
      >
        Sign in
      </button>
    </main>
  );
}
