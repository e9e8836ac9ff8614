# The console, for docker-compose.yml: it talks to the masters named in REDLOCK_NODES and runs no
# redis-server of its own.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
COPY package.json package-lock.json ./
# The lock core is an npm workspace: its manifest must be there for npm ci to link it.
COPY packages/redlock/package.json packages/redlock/
RUN npm ci --no-audit --no-fund
COPY . .
RUN node --import tsx scripts/build.ts

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOST=0.0.0.0 PORT=3000 REDLOCK_DATA_DIR=/data
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:3000/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--import", "tsx", "scripts/start.ts"]
