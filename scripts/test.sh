#!/usr/bin/env bash
# npm test: every check, in the order that fails fastest. Needs redis-server and chromium
# (installed with apt-get when missing and running as root, otherwise a clear message).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "generated Lua module is current"
node scripts/gen-lua.mjs --check
step "system packages (redis-server, chromium, promtool, curl, python3, nutcracker)"
node --import tsx scripts/ensure-packages.ts redis-server chromium promtool curl python3 nutcracker
step "typecheck"
npx tsc --noEmit
step "lint"
npx eslint --max-warnings=0 .
step "format (prettier --check; npm run format fixes it)"
npx prettier --check --log-level warn "**/*.{ts,tsx,mjs,css}"
step "build"
node --import tsx scripts/build.ts --if-stale
step "unit + integration (vitest, real redis-server)"
npx vitest run
step "chaos harness (ci profile: nemeses, negative controls, mutants)"
node --import tsx scripts/chaos.ts --profile ci --seed 1
step "end-to-end (Playwright, Debian Chromium)"
npx playwright test
