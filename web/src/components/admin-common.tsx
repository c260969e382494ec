/** What the administration views share: loading one answer, showing a problem. */
import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api.ts';

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [T | null, string | null, (v: T) => void] {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setValue(null);
    load().then(setValue, (e: unknown) => setError(describeError(e)));
  }, deps);
  return [value, error, setValue];
}

export function Problem({ text }: { text: string | null }) {
  return text ? (
    <p class="alert" role="alert">
      {text}
    </p>
  ) : null;
}

