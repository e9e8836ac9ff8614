'use client';

import { useEffect, useRef } from 'react';

/**
 * Open a native <dialog> as a modal for as long as its component is mounted: the browser traps
 * focus and Esc cancels it; on unmount it closes and focus goes back to the element that opened
 * it. (The browser restores focus itself only when an attached dialog closes; these dialogs are
 * unmounted right after, so focus would fall to <body> and a keyboard user would start over.)
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
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return ref;
}
