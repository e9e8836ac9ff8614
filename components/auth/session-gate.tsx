'use client';

import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter } from 'next/navigation';
import { useEffect, type ReactNode } from 'react';
import { meQuery } from '@/lib/client/session';

/** Pages behind login: send anonymous visitors to /login and come back afterwards. */
export function SessionGate({ children }: { children: ReactNode }) {
  const { data: me, isPending, error } = useQuery(meQuery());
  const router = useRouter();
  const pathname = usePathname();
  useEffect(() => {
    if (!isPending && !error && me === null) router.replace(`/login?next=${encodeURIComponent(pathname)}`);
  }, [isPending, error, me, router, pathname]);
  if (error)
    return (
      <main className="page">
        <p className="callout callout-bad" role="alert">
          Could not reach the console: {error.message}
        </p>
      </main>
    );
  if (isPending || !me)
    return (
      <main className="page">
        <p className="muted" data-loading-state="loading">
          Checking your session…
        </p>
      </main>
    );
  return <>{children}</>;
}
