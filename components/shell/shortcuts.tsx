'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState } from 'react';
import { isTyping as typing } from '../ui/keyboard';
import { NAV_ITEMS } from './nav';
import { applyTheme, nextTheme, readTheme } from './theme';

/** Where `g <key>` goes: every screen of the navigation, and the API reference (a page of its own, not on the bar). */
const DESTINATIONS = [...NAV_ITEMS, { href: '/api-reference', label: 'API reference', key: 'r' }] as const;

const SHORTCUTS: Array<[string, string]> = [
  ...DESTINATIONS.map((item): [string, string] => [`g ${item.key}`, `Go to ${item.label}`]),
  ['/', 'Focus the search or filter of this screen'],
  ['j / k', 'Next / previous row in a list'],
  ['Enter', 'Open the selected row'],
  ['t', 'Switch theme (system → dark → light)'],
  ['?', 'Show or hide this list'],
  ['Esc', 'Close a dialog'],
];

/** Global keyboard shortcuts, listed behind `?`. */
export function Shortcuts() {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    let pendingG = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || typing(e.target)) return;
      if (e.key === '?') {
        setOpen((o) => !o);
        return;
      }
      if (e.key === 'g') {
        pendingG = Date.now();
        return;
      }
      if (Date.now() - pendingG < 1_000) {
        const item = DESTINATIONS.find((i) => i.key === e.key);
        pendingG = 0;
        if (item) {
          e.preventDefault();
          router.push(item.href);
          return;
        }
      }
      if (e.key === 't') applyTheme(nextTheme(readTheme()));
      if (e.key === '/') {
        const search = document.querySelector<HTMLElement>('[data-shortcut-search]');
        if (search) {
          e.preventDefault();
          search.focus();
        }
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [router]);
  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (open && !el.open) el.showModal();
    if (!open && el.open) el.close();
  }, [open]);
  return (
    <>
      <button
        type="button"
        className="button button-ghost icon-button shortcuts-button"
        aria-label="Keyboard shortcuts (?)"
        onClick={() => setOpen(true)}
      >
        ?
      </button>
      <dialog ref={dialog} className="dialog" aria-label="Keyboard shortcuts" onClose={() => setOpen(false)} data-testid="shortcuts-dialog">
        <h2>Keyboard shortcuts</h2>
        <table className="shortcut-table">
          <tbody>
            {SHORTCUTS.map(([keys, what]) => (
              <tr key={keys}>
                <td>
                  <kbd>{keys}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p>
          Taking locks from a program? The <Link href="/api-reference">API reference</Link> describes every route (OpenAPI 3.1,{' '}
          <a href="/api/openapi.json">download</a>).
        </p>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={() => setOpen(false)}>
            Close
          </button>
        </div>
      </dialog>
    </>
  );
}
