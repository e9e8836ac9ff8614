import type { Metadata } from 'next';
import { headers } from 'next/headers';
import type { ReactNode } from 'react';
import { THEME_BOOT_SCRIPT } from '@/components/shell/theme';
import './globals.css';
import './shell.css';
import { Providers } from './providers';

export const metadata: Metadata = {
  title: { default: 'redlock-console', template: '%s · redlock-console' },
  description: 'Redlock distributed locks over independent Redis masters: inspect, operate, teach.',
};

/**
 * Every page renders per request: its Content-Security-Policy allows only scripts carrying this
 * response's nonce (proxy.ts), which Next.js adds to its own scripts and we add to ours.
 */
export default async function RootLayout({ children }: { children: ReactNode }) {
  const nonce = (await headers()).get('x-nonce') ?? undefined;
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_BOOT_SCRIPT }} />
      </head>
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
