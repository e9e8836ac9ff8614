import type { ReactNode } from 'react';
import { SessionGate } from '@/components/auth/session-gate';
import { UserMenu } from '@/components/auth/user-menu';
import { ConnectionBanner } from '@/components/shell/connection-banner';
import { LiveStatus } from '@/components/shell/live-status';
import { Nav } from '@/components/shell/nav';
import { Shortcuts } from '@/components/shell/shortcuts';
import { ThemeToggle } from '@/components/shell/theme-toggle';
import { TopBar } from '@/components/shell/top-bar';

/** Every signed-in screen: top bar with navigation, live status, theme, shortcuts and the user. */
export default function ConsoleLayout({ children }: { children: ReactNode }) {
  return (
    <SessionGate>
      <TopBar
        nav={<Nav />}
        user={<UserMenu />}
        tools={
          <>
            <LiveStatus />
            <ThemeToggle />
            <Shortcuts />
          </>
        }
      />
      <ConnectionBanner />
      <main className="page">{children}</main>
    </SessionGate>
  );
}
