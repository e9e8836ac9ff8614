import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';
import { API_CSP, HSTS, STATIC_SECURITY_HEADERS } from './lib/server/http/security-headers';

const nextConfig: NextConfig = {
  reactStrictMode: true,
  // The Docker image's node_modules: only the files the server needs, traced by the build
  // (.next/standalone/node_modules; see the Dockerfile). `npm start` does not use it.
  output: 'standalone',
  poweredByHeader: false,
  // NEXT_DIST_DIR lets two builds (e.g. two e2e runs) live side by side; `.next` by default.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  // ioredis, redis-parser and pino are server-only Node libraries: keep them out of the bundler.
  serverExternalPackages: ['ioredis', 'redis-parser', 'pino', 'prom-client'],
  typedRoutes: false,
  // lib/server exists once in the console's process: Next.js's server build holds, for each of its
  // modules, a shim that imports the copy the console's server loaded (scripts/support/node-copy-loader.mjs).
  turbopack: {
    rules: {
      '*.ts': {
        condition: { all: [{ path: /(^|\/)lib\/server\// }, { not: 'browser' }] },
        loaders: [fileURLToPath(new URL('./scripts/support/node-copy-loader.mjs', import.meta.url))],
        as: '*.js',
      },
    },
  },
  // `npm test` runs `tsc --noEmit` over the whole repository (tests included); checking again in
  // every build would only double the time of `npm start`'s first build.
  typescript: { ignoreBuildErrors: true },
  experimental: {
    // proxy.ts sees only pages, which take no bodies: never copy more than the API would accept.
    proxyClientMaxBodySize: 64 * 1024,
  },
  // Security headers on every response (lib/server/http/security-headers.ts); pages get their
  // nonce CSP from proxy.ts.
  async headers() {
    return [
      { source: '/:path*', headers: [...STATIC_SECURITY_HEADERS] },
      { source: '/api/:path*', headers: [{ key: 'Content-Security-Policy', value: API_CSP }] },
      { source: '/:path*', has: [{ type: 'header', key: 'x-forwarded-proto', value: 'https' }], headers: [HSTS] },
    ];
  },
};

export default nextConfig;
