import { NextResponse, type NextRequest } from 'next/server';
import { newNonce, pageCsp } from './lib/server/http/security-headers';

/**
 * Next.js 16's request proxy (formerly middleware): every page gets a Content-Security-Policy with
 * a fresh nonce. The nonce reaches the render through the request headers (Next.js puts it on its
 * own scripts; the root layout on its inline theme script). API routes are left out on purpose:
 * a matched POST has its body copied for the proxy, and the API needs no nonce (next.config.ts
 * gives it a CSP of its own).
 */
export function proxy(request: NextRequest): NextResponse {
  const nonce = newNonce();
  const csp = pageCsp(nonce, {
    dev: process.env.NODE_ENV === 'development',
    https: request.headers.get('x-forwarded-proto') === 'https' || request.nextUrl.protocol === 'https:',
  });
  const headers = new Headers(request.headers);
  headers.set('x-nonce', nonce);
  headers.set('content-security-policy', csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set('content-security-policy', csp);
  return response;
}

/**
 * Every path but the API, the build's static files, the image optimizer and the favicon, each
 * excluded exactly: a prefix (`favicon.ico`, `_next/image`) also excluded `/favicon.ico.html` and
 * `/_next/imagefoo`, whose 404 pages then went out without a CSP.
 */
export const config = {
  matcher: ['/((?!api/|_next/static/|_next/image$|favicon\\.ico$).*)'],
};
