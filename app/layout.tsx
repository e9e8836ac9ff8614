import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { THEME_BOOT_SCRIPT } from '@/components/shell/theme';
import './globals.css';
import { Providers } from './providers';

export const metadata: Metadata = {
  title: { default: 'redlock-console', template: '%s · redlock-console' },
  description: 'Redlock distributed locks over independent Redis masters: inspect, operate, teach.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        <script dangerouslySetInnerHTML={{ __html: THEME_BOOT_SCRIPT }} />
      </head>
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
