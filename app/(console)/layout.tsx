import Link from 'next/link';
import type { ReactNode } from 'react';
import { SessionGate } from '@/components/auth/session-gate';
import { UserMenu } from '@/components/auth/user-menu';
import { LiveStatus } from '@/components/shell/live-status';
import { Nav } from '@/components/shell/nav';
import { Shortcuts } from '@/components/shell/shortcuts';
import { ThemeToggle } from '@/components/shell/theme-toggle';

/** Every signed-in screen: top bar with navigation, live status, theme, shortcuts and the user. */
export default function ConsoleLayout({ children }: { children: ReactNode }) {
  return (
    <SessionGate>
      <header className="topbar">
        <Link className="brand" href="/">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>{' '}
          redlock-console
        </Link>
        <Nav />
        <div className="topbar-tools">
          <LiveStatus />
          <ThemeToggle />
          <Shortcuts />
          <UserMenu />
        </div>
      </header>
      <main className="page">{children}</main>
    </SessionGate>
  );
}
