'use client';

/**
 * Copy a value to the clipboard and say so to screen readers. The Clipboard API needs a secure
 * context (https, or localhost); a console reached over plain http on another address falls back
 * to the selection-and-copy command. Resolves false when neither worked, so the caller can show
 * the value to copy by hand.
 */
export async function copyText(text: string, what: string): Promise<boolean> {
  let copied = false;
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      copied = true;
    }
  } catch {
    copied = false;
  }
  if (!copied) copied = copyBySelection(text);
  announce(copied ? `${what} copied` : `${what} could not be copied`);
  return copied;
}

function copyBySelection(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

/** One polite live region for the whole console, created on first use. */
function announce(message: string): void {
  let region = document.getElementById('copy-announcer');
  if (!region) {
    region = document.createElement('div');
    region.id = 'copy-announcer';
    region.className = 'visually-hidden';
    region.setAttribute('aria-live', 'polite');
    document.body.append(region);
  }
  region.textContent = '';
  // A fresh text node after clearing, so the same message twice is announced twice.
  window.setTimeout(() => (region.textContent = message), 30);
}
