/**
 * Scalar gives every operation's example card the same landmark name ("Example Responses",
 * labelled by its status-code tabs), so a screen reader's landmark list holds many identical
 * regions and axe reports `landmark-unique`. Name each region after its operation as well. Runs
 * again as Scalar renders more operations (it renders lazily while the reader scrolls).
 */
export function labelRegions(root: HTMLElement): void {
  for (const region of Array.from(root.querySelectorAll<HTMLElement>('[role="region"]:not([data-operation-labelled])'))) {
    const section = region.parentElement?.closest<HTMLElement>('section');
    const operation = section && accessibleName(section);
    if (!operation) continue;
    region.setAttribute('aria-label', `${region.getAttribute('aria-label') ?? accessibleName(region) ?? 'Region'}: ${operation}`);
    region.removeAttribute('aria-labelledby');
    region.dataset.operationLabelled = '';
  }
}

function accessibleName(el: HTMLElement): string | null {
  const label = el.getAttribute('aria-label');
  if (label) return label.trim();
  const by = el.getAttribute('aria-labelledby');
  const text = by ? document.getElementById(by)?.textContent : null;
  return text?.trim() || null;
}
