import styles from './middle-text.module.css';

/** Characters always kept at the end of a long name: where names of one family differ (…-reconciliation-3, …-7f9c8d6b5-x2k4q). */
const TAIL = 16;

/**
 * Where a long name is split: after its last `/` when that keeps between 6 and 24 characters at the
 * end, else the last TAIL characters. Exported for the tests.
 */
export function splitName(text: string, tail = TAIL): [head: string, tail: string] {
  if (text.length <= tail + 4) return [text, ''];
  const slash = text.lastIndexOf('/');
  const kept = text.length - slash - 1;
  const at = slash >= 0 && kept >= 6 && kept <= 24 ? slash + 1 : text.length - tail;
  return [text.slice(0, at), text.slice(at)];
}

/**
 * A name that never loses its end: when it does not fit, its middle gives way (`tenant/acme-corpo…
 * reconciliation-3`), so names that share a long beginning still read differently; in a box too
 * narrow even for the tail, the tail gives way at its start (`…ation-3`), never at its end. All the text
 * stays in the page (screen readers, find, copy read it whole) and `title` shows it on hover; the
 * control around it shows it on keyboard focus (the `full-tip` class, app/globals.css).
 */
export function MiddleText({ text, className, title = text }: { text: string; className?: string; title?: string | null }) {
  const [head, tail] = splitName(text);
  return (
    <span className={`${styles.middle} ${className ?? ''}`} title={title ?? undefined} data-full={text}>
      {/* Head and tail are flex items, and Chromium names a control by its content with a space
          between flex items ("e2e-dialog-forei gn-…"): assistive tech reads the one whole copy beside them. */}
      <span className={styles.head} aria-hidden="true">
        {head}
      </span>
      {tail ? (
        <span className={styles.tail} aria-hidden="true">
          <span dir="ltr">{tail}</span>
        </span>
      ) : null}
      <span className={`visually-hidden ${styles.spoken}`}>{text}</span>
    </span>
  );
}
