/**
 * Scalar gives every operation's example card the same landmark name ("Example Responses"), so a
 * screen reader's landmark list holds many identical regions and axe reports `landmark-unique`.
 * Only those cards are touched: Scalar's example cards (`.response-card`, a `region`) inside an
 * operation's section. Each keeps its own name and gets its operation's appended: a card named by
 * `aria-labelledby` keeps those ids (all of them) and gains the operation heading's; a card named
 * by `aria-label` gets ": <operation>" after it. Other regions (the tag sections, named after
 * their tag and already unique) are left alone.
 */
export const EXAMPLE_CARD = 'section [role="region"].response-card';
const UNLABELLED = `${EXAMPLE_CARD}:not([data-operation-labelled])`;

/**
 * Labels every example card under root not labelled yet. Returns how many it had to leave for
 * later (their operation's heading not rendered yet).
 */
export function labelRegions(root: HTMLElement): number {
  let pending = 0;
  for (const region of Array.from(root.querySelectorAll<HTMLElement>(UNLABELLED))) {
    if (!labelRegion(region)) pending++;
  }
  return pending;
}

function labelRegion(region: HTMLElement): boolean {
  const section = region.parentElement?.closest<HTMLElement>('section');
  const operation = section && accessibleName(section);
  if (!section || !operation) return false;
  const own = ids(region.getAttribute('aria-labelledby'));
  const headings = ids(section.getAttribute('aria-labelledby')).filter((id) => region.ownerDocument.getElementById(id));
  if (own.length > 0 && headings.length > 0) {
    // aria-labelledby wins over aria-label: add to it, so the card's own (possibly live) name stays.
    region.setAttribute('aria-labelledby', [...own, ...headings.filter((id) => !own.includes(id))].join(' '));
  } else {
    region.setAttribute('aria-label', `${accessibleName(region) ?? 'Region'}: ${operation}`);
    region.removeAttribute('aria-labelledby');
  }
  region.dataset.operationLabelled = '';
  return true;
}

/**
 * The cheap check for the MutationObserver: did any of these records add an example card (or a
 * subtree holding one)? Only then is a scan worth it; Scalar mutates its DOM on every scroll.
 */
export function addsExampleCard(records: readonly MutationRecord[]): boolean {
  for (const record of records) {
    for (const node of Array.from(record.addedNodes)) {
      if (node.nodeType !== Node.ELEMENT_NODE) continue;
      const el = node as Element;
      if (el.matches(UNLABELLED) || el.querySelector(UNLABELLED)) return true;
    }
  }
  return false;
}

function ids(value: string | null): string[] {
  return value ? value.split(/\s+/).filter(Boolean) : [];
}

/** The element's name from aria-labelledby (every id, in order) or aria-label. */
function accessibleName(el: HTMLElement): string | null {
  const by = ids(el.getAttribute('aria-labelledby'))
    .map((id) => el.ownerDocument.getElementById(id)?.textContent?.trim())
    .filter(Boolean)
    .join(' ');
  if (by) return by;
  return el.getAttribute('aria-label')?.trim() || null;
}
