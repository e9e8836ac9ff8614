import Link from 'next/link';

/** The console's name and mark, as the top bars show it: a link home, or plain text (the login page). */
export function Brand({ link = true }: { link?: boolean }) {
  const content = (
    <>
      <span className="brand-mark" aria-hidden="true">
        ◆
      </span>{' '}
      redlock-console
    </>
  );
  return link ? (
    <Link className="brand" href="/">
      {content}
    </Link>
  ) : (
    <span className="brand">{content}</span>
  );
}
