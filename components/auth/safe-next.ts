/**
 * Where to go after signing in: the `next` query parameter, only if it is a path on the console's
 * own origin. Decided the way the browser will read it — parsed as a URL against `origin` — never
 * by looking at its first characters: `/\evil.example`, `/\t/evil` (tabs and newlines are
 * dropped), `/.//evil` and `//evil` all start with one slash and leave the site. Returns the
 * parsed path (+ query + fragment), else `/`.
 */
export function safeNextPath(next: string | null | undefined, origin: string): string {
  if (!next) return '/';
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return '/';
  }
  if (url.origin !== origin) return '/';
  const path = `${url.pathname}${url.search}${url.hash}`;
  // A path that itself starts with two slashes (or a slash and a backslash) is another host when
  // navigated to: `/.//evil` parses to the path `//evil`.
  if (!path.startsWith('/') || /^[/\\]{2}/.test(path)) return '/';
  // Nor once more decoded (`/%5Cevil` is `/\evil` to whatever decodes it again).
  let decoded = path;
  try {
    decoded = decodeURIComponent(url.pathname);
  } catch {
    return '/';
  }
  if (/^[/\\]{2}/.test(decoded.replace(/[\t\n\r]/g, ''))) return '/';
  // And the path we hand on must come back to this origin when read once more.
  return new URL(path, origin).origin === origin ? path : '/';
}
