'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useRouter, useSearchParams } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { meSchema } from '@/lib/api/auth';
import { ApiError } from '@/lib/client/fetch-json';
import { postJson, rememberSession } from '@/lib/client/session';
import { safeNextPath } from './safe-next';

export function LoginForm() {
  const router = useRouter();
  const search = useSearchParams();
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const me = await postJson(
        '/api/auth/login',
        { username: String(form.get('username')), password: String(form.get('password')) },
        meSchema,
      );
      rememberSession(me);
      queryClient.setQueryData(['me'], me);
      router.replace(safeNextPath(search.get('next'), window.location.origin));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Could not reach the console');
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="login-card" onSubmit={submit} aria-label="Sign in">
      <h1>Sign in</h1>
      <p className="muted">redlock-console · operators and viewers</p>
      <label>
        Username
        <input name="username" autoComplete="username" required autoFocus />
      </label>
      <label>
        Password
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <button type="submit" className="button button-primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      <p className="muted small">
        The operator login is printed by <code>npm start</code> and kept in <code>.data/operator.json</code>.
      </p>
    </form>
  );
}
