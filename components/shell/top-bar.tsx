'use client';

import { Brand } from './brand';
import { usePathname } from 'next/navigation';
import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * The top bar. Below 1240 px the navigation folds behind "Menu" (and below 900 px the user too;
 * app/shell.css): the menu opens as a panel under the bar, closes on Escape (focus back on the
 * toggle), on a click outside, and when a link in it is followed.
 */
export function TopBar({ nav, user, tools }: { nav: ReactNode; user: ReactNode; tools: ReactNode }) {
  // Open for the path it was opened on: following a link closes it without an effect.
  const pathname = usePathname();
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const setOpen = (next: boolean) => setOpenOn(next ? pathname : null);
  const bar = useRef<HTMLElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpenOn(null);
      toggle.current?.focus();
    };
    const onPointer = (e: PointerEvent) => {
      if (!bar.current?.contains(e.target as Node)) setOpenOn(null);
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('pointerdown', onPointer);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('pointerdown', onPointer);
    };
  }, [open]);

  return (
    <header className={`topbar${open ? ' topbar-open' : ''}`} ref={bar}>
      <Brand />
      <div className="topbar-collapse topbar-panel" id="topbar-menu">
        {nav}
        {user}
      </div>
      <div className="topbar-tools">
        {tools}
        <button
          type="button"
          ref={toggle}
          className="button button-ghost menu-toggle"
          aria-expanded={open}
          aria-controls="topbar-menu"
          onClick={() => setOpen(!open)}
        >
          <span aria-hidden="true">{open ? '✕' : '☰'}</span>&nbsp;Menu
        </button>
      </div>
    </header>
  );
}
