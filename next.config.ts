import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // NEXT_DIST_DIR lets two builds (e.g. two e2e runs) live side by side; `.next` by default.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  // ioredis and pino are server-only Node libraries: keep them out of the bundler.
  serverExternalPackages: ['ioredis', 'pino', 'prom-client'],
  typedRoutes: false,
  // `npm test` runs `tsc --noEmit` over the whole repository (tests included); checking again in
  // every build would only double the time of `npm start`'s first build.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
