'use client';

import { useEffect, useRef } from 'react';

/**
 * Open a native <dialog> as a modal for as long as its component is mounted: the browser traps
 * focus and Esc cancels it; on unmount it closes and focus goes back to the element that opened
 * it. (The browser restores focus itself only when an attached dialog closes; these dialogs are
 * unmounted right after, so focus would fall to <body> and a keyboard user would start over.)
 * When the opener is gone or disabled by then (the lock it released is gone, the selection it
 * acted on was cleared), focus goes to the screen's heading instead.
 */
export function useModalDialog<T extends HTMLDialogElement>() {
  const ref = useRef<T>(null);
  useEffect(() => {
    const el = ref.current;
    const opener =
      document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    if (el && !el.open) el.showModal();
    return () => {
      if (el?.open) el.close();
      returnFocus(opener);
    };
  }, []);
  return ref;
}

function returnFocus(opener: HTMLElement | null): void {
  if (opener?.isConnected && !opener.matches(':disabled')) {
    opener.focus();
    return;
  }
  const heading = document.querySelector<HTMLElement>('main h1');
  if (!heading) return;
  if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
  heading.focus();
}
