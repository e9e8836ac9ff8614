'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useRef, useState } from 'react';
import { logoutResponseSchema } from '@/lib/api/auth';
import { meQuery, postJson, rememberSession } from '@/lib/client/session';

/**
 * Who is signed in, and signing out: of this browser, or everywhere (every session of this user,
 * in every console process: the revocation is kept on the masters, see POST /api/auth/logout).
 * The two choices sit behind one "Sign out" disclosure so the top bar stays narrow; the panel also
 * says who is signed in, with which role, on which cluster (the bar shows the name and one word).
 */
export function UserMenu() {
  const { data: me } = useQuery(meQuery());
  const queryClient = useQueryClient();
  const router = useRouter();
  const menu = useRef<HTMLDetailsElement>(null);
  const [problem, setProblem] = useState<string | null>(null);
  if (!me) return null;
  async function signOut(everywhere: boolean) {
    setProblem(null);
    try {
      await postJson('/api/auth/logout', everywhere ? { everywhere: true } : {}, logoutResponseSchema);
    } catch (err) {
      // Signing out of this browser goes on regardless (the cookie is gone either way); a failed
      // "everywhere" must say so: the other sessions may still be valid.
      if (everywhere) {
        setProblem(`Could not end the other sessions: ${(err as Error).message}`);
        return;
      }
    }
    rememberSession(null);
    queryClient.clear();
    router.replace('/login');
  }
  return (
    <div className="user-menu" data-testid="user-menu">
      {/* One word on the bar (it has to fit at 1280 px with the navigation); the whole phrase for
          screen readers, and in the panel. */}
      <span className={`badge ${me.sandbox ? 'badge-sandbox' : 'badge-external'}`} data-testid="mode-badge">
        {me.sandbox ? 'sandbox' : 'external'}
        <span className="visually-hidden">{me.sandbox ? ' cluster' : ' masters'}</span>
      </span>
      <span className="user-name" title={`${me.username} (${me.role})`}>
        {me.username}
      </span>
      <details className="sign-out-menu" ref={menu} onKeyDown={(e) => e.key === 'Escape' && menu.current?.removeAttribute('open')}>
        <summary className="button button-ghost">Sign out</summary>
        <div className="sign-out-choices" role="group" aria-label="Sign out">
          {/* Who, as what, where: the role and the cluster's mode, kept off the bar for room. */}
          <p className="sign-out-who">
            <span className="sign-out-who-name">{me.username}</span>{' '}
            <span className="role-badge" data-testid="role-badge">
              {me.role}
            </span>
            <br />
            {me.sandbox ? 'On the sandbox cluster' : 'On external masters'}
          </p>
          <button type="button" className="button button-ghost" onClick={() => void signOut(false)}>
            Sign out of this browser
          </button>
          <button
            type="button"
            className="button button-ghost"
            onClick={() => void signOut(true)}
            aria-describedby="sign-out-everywhere-hint"
          >
            Sign out everywhere
          </button>
          <p className="sign-out-hint" id="sign-out-everywhere-hint">
            Ends every session of {me.username}, on every device and console process.
          </p>
          {problem ? (
            <p className="sign-out-hint" role="alert">
              {problem}
            </p>
          ) : null}
        </div>
      </details>
    </div>
  );
}
