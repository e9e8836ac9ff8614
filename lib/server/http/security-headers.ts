/**
 * The console's security headers, in one place. next.config.ts sends the static ones on every
 * response (pages, API, assets); proxy.ts sends each page its Content-Security-Policy with a fresh
 * nonce, which Next.js puts on its own scripts (the page must render dynamically for that).
 *
 * - Scripts: only those carrying this response's nonce, and what they load ('strict-dynamic'); no
 *   'unsafe-inline' scripts, no eval outside `next dev`. An injected <script> never runs.
 * - Styles keep 'unsafe-inline': React and the charts set style attributes, which a nonce cannot
 *   cover; a style cannot run code.
 * - Framing: `frame-ancestors 'none'` and X-Frame-Options DENY (older browsers): no page of another
 *   site can frame the console under its own buttons (clickjacking a Force-release).
 * - API answers are data, never documents: `default-src 'none'`.
 */

export interface Header {
  key: string;
  value: string;
}

/** On every response. */
export const STATIC_SECURITY_HEADERS: readonly Header[] = Object.freeze([
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'no-referrer' },
  {
    key: 'Permissions-Policy',
    value:
      'accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), ' +
      'payment=(), publickey-credentials-get=(), usb=(), browsing-topics=()',
  },
  { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
  { key: 'Cross-Origin-Resource-Policy', value: 'same-origin' },
]);

/** On API responses (JSON, CSV, event streams): nothing in them may load or run anything, nor be framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The CSP of an HTML answer that came without one (the console's server adds it: front.ts): an
 * inert page, styled but running nothing. proxy.ts gives every page its nonce CSP; this is the net
 * under a path it does not see (some 404 pages had none).
 */
export const FALLBACK_PAGE_CSP =
  "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Only over https (a TLS-terminating proxy says so with X-Forwarded-Proto); browsers ignore it over http anyway. */
export const HSTS: Header = { key: 'Strict-Transport-Security', value: 'max-age=31536000' };

/** The CSP of one page response. `dev`: `next dev` needs eval (React's debugging) and its HMR socket. */
export function pageCsp(nonce: string, options: { dev: boolean; https: boolean }): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${options.dev ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${options.dev ? ' ws: wss:' : ''}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "frame-src 'none'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    ...(options.https ? ['upgrade-insecure-requests'] : []),
  ].join('; ');
}

/** A fresh, unguessable nonce (128 bits, base64). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}
