# The console, for docker-compose.yml: it talks to the masters named in REDLOCK_NODES and runs no
# redis-server of its own.
#
# Two stages. `build` compiles everything with the dev tools: the Next.js build (which also traces
# the few packages the server needs: `output: 'standalone'`) and the two server processes bundled
# to plain JavaScript (scripts/support/server-bundle.ts); then scripts/assemble-image.ts puts the
# image's files in /image (the list: scripts/support/image-files.ts). The final stage copies /image
# and nothing else: no sources, no TypeScript, no tsx, no dev or test tools, a node_modules of
# ~40 MB. It runs as the unprivileged `node` user and writes only under /data (the data
# directory) and /tmp, so `read_only: true` works (docker-compose.yml sets it).
# test/unit/dockerfile.test.ts checks this file; test/integration/server-bundle.test.ts assembles
# the same files and runs them with plain node as an unprivileged user.
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
RUN node --import tsx scripts/build.ts && node --import tsx scripts/assemble-image.ts /image

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOST=0.0.0.0 PORT=3000 REDLOCK_DATA_DIR=/data
COPY --from=build /image ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
# Liveness: the console answers. (Not readiness: a console whose masters lost their quorum must
# stay up to show it; load balancers can use GET /api/ready.)
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/api/health`).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/server/start.mjs"]
