import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionLimits } from '../../lib/server/http/connection-limits';
import { createConsoleServer, type ConsoleServer } from '../../lib/server/http/front';
import { FALLBACK_PAGE_CSP } from '../../lib/server/http/security-headers';

/**
 * Some 404 pages (`/favicon.ico.html`, `/_next/imagefoo`) went out with the app's
 * scripts and no CSP, proxy.ts not seeing their paths. proxy.ts now sees them
 * (e2e/security.spec.ts requests such paths on the built console); under it, the console's server
 * gives any HTML answer that has no CSP an inert one, however the head was written. Here the
 * server's front with a handler standing for Next.js.
 */
let front: ConsoleServer;
let base: string;

beforeAll(async () => {
  front = createConsoleServer(connectionLimits({}), (req, res) => {
    const url = req.url ?? '';
    if (url === '/object') res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' }).end('<script>1</script>');
    else if (url === '/list') res.writeHead(404, ['content-type', 'text/html']).end('<p>x</p>');
    else if (url === '/implicit') {
      res.statusCode = 404;
      res.setHeader('content-type', 'text/html');
      res.end('<p>x</p>');
    } else if (url === '/own')
      res.writeHead(200, { 'content-type': 'text/html', 'content-security-policy': "script-src 'nonce-abc'" }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((done) => front.server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(front.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  front.server.closeAllConnections();
  front.lean?.closeAll();
  await new Promise((done) => front.server.close(done));
});

describe('an HTML answer without a CSP', () => {
  it('gets the inert one, whether its head was an object, a list or set header by header', async () => {
    for (const path of ['/object', '/list', '/implicit']) {
      const res = await fetch(`${base}${path}`);
      expect(res.headers.get('content-security-policy'), path).toBe(FALLBACK_PAGE_CSP);
      expect(FALLBACK_PAGE_CSP).toContain("default-src 'none'"); // no script runs
    }
  });

  it('keeps a page’s own CSP, and leaves answers that are not HTML alone', async () => {
    expect((await fetch(`${base}/own`)).headers.get('content-security-policy')).toBe("script-src 'nonce-abc'");
    expect((await fetch(`${base}/data`)).headers.get('content-security-policy')).toBeNull();
  });
});
