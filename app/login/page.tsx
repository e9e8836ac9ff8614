import Link from 'next/link';
import { Suspense } from 'react';
import { LoginForm } from '@/components/auth/login-form';
import { Brand } from '@/components/shell/brand';
import { ThemeToggle } from '@/components/shell/theme-toggle';

export const metadata = { title: 'Sign in' };

export default function LoginPage() {
  return (
    <>
      <header className="topbar">
        <Brand link={false} />
        <div className="topbar-tools">
          <ThemeToggle />
        </div>
      </header>
      <main className="page login-page">
        <Suspense>
          <LoginForm />
        </Suspense>
        <p className="login-aside">
          Taking locks from a program? No login needed: an API key and the <Link href="/api-reference">API reference</Link>.
        </p>
      </main>
    </>
  );
}
