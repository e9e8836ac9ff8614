'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { z } from 'zod';
import { meQuery, postJson, rememberSession } from '@/lib/client/session';

export function UserMenu() {
  const { data: me } = useQuery(meQuery());
  const queryClient = useQueryClient();
  const router = useRouter();
  if (!me) return null;
  async function signOut() {
    await postJson('/api/auth/logout', {}, z.unknown()).catch(() => undefined);
    rememberSession(null);
    queryClient.clear();
    router.replace('/login');
  }
  return (
    <div className="user-menu" data-testid="user-menu">
      <span className={`badge ${me.sandbox ? 'badge-sandbox' : 'badge-external'}`} data-testid="mode-badge">
        {me.sandbox ? 'sandbox cluster' : 'external masters'}
      </span>
      <span className="user-name">{me.username}</span>
      <span className="role-badge" data-testid="role-badge">
        {me.role}
      </span>
      <button type="button" className="button button-ghost" onClick={signOut}>
        Sign out
      </button>
    </div>
  );
}
