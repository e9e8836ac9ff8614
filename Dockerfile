# The console, for docker-compose.yml: it talks to the masters named in REDLOCK_NODES and runs no
# redis-server of its own.
#
# Three stages: `build` compiles everything with the dev tools (Next.js build, and the two server
# processes bundled to plain JavaScript: scripts/support/server-bundle.ts); `deps` installs the
# production dependencies only; the final image gets those, the build output and nothing else — no
# sources, no TypeScript, no tsx, no test or bench tools. It runs as the unprivileged `node` user
# and writes only under /data (the data directory) and /tmp, so `read_only: true` works
# (docker-compose.yml sets it). test/unit/dockerfile.test.ts checks this file's shape and
# test/integration/server-bundle.test.ts runs exactly the files the final stage copies.
# Node 26: the Active LTS line (Node 20 reached its end of life on 2026-04-30).
ARG NODE_IMAGE=node:26-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
COPY package.json package-lock.json ./
# The lock core is an npm workspace: its manifest must be there for npm ci to link it.
COPY packages/redlock/package.json packages/redlock/
RUN npm ci --no-audit --no-fund
COPY . .
# The build's caches and traces are not part of what runs.
RUN node --import tsx scripts/build.ts && rm -rf .next/cache .next/trace .next/trace-build .next/diagnostics .next/types

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/redlock/package.json packages/redlock/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOST=0.0.0.0 PORT=3000 REDLOCK_DATA_DIR=/data
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/package.json /app/next.config.ts ./
COPY --from=build /app/packages/redlock/package.json packages/redlock/
COPY --from=build /app/dist/server dist/server
COPY --from=build /app/.next .next
COPY --from=build /app/chaos/reference chaos/reference
# next.config.ts imports the security headers it sets (Next.js reads the config at start).
COPY --from=build /app/lib/server/http/security-headers.ts lib/server/http/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
# Healthy = the console answers and a quorum of the masters answers it (GET /api/ready).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD ["node", "-e", "fetch('http://127.0.0.1:3000/api/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/server/start.mjs"]
