import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import './globals.css';
import { UserMenu } from '@/components/auth/user-menu';
import { Providers } from './providers';

export const metadata: Metadata = {
  title: 'redlock-console',
  description: 'Redlock distributed locks over independent Redis masters: inspect, operate, teach.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>
          <header className="topbar">
            <Link className="brand" href="/">
              <span className="brand-mark" aria-hidden="true">◆</span> redlock-console
            </Link>
            <UserMenu />
          </header>
          <main className="page">{children}</main>
        </Providers>
      </body>
    </html>
  );
}
