'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

export const NAV_ITEMS = [
  { href: '/', label: 'Overview', key: 'o' },
  { href: '/locks', label: 'Locks', key: 'l' },
  { href: '/nodes', label: 'Nodes', key: 'n' },
  { href: '/playground', label: 'Playground', key: 'p' },
  { href: '/scenarios', label: 'Scenarios', key: 's' },
  { href: '/chaos', label: 'Chaos', key: 'c' },
  { href: '/audit', label: 'Audit log', key: 'a' },
] as const;

export function Nav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="nav topbar-panel">
      {NAV_ITEMS.map((item) => {
        const active = item.href === '/' ? pathname === '/' : pathname.startsWith(item.href);
        return (
          <Link
            key={item.href}
            href={item.href}
            className={`nav-link${active ? ' nav-link-active' : ''}`}
            aria-current={active ? 'page' : undefined}
          >
            {item.label}
          </Link>
        );
      })}
    </nav>
  );
}
