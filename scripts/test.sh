#!/usr/bin/env bash
# npm test: every check, in the order that fails fastest. Needs redis-server and chromium
# (installed with apt-get when missing and running as root, otherwise a clear message).
# Each tier prints its wall time; the first failing tier stops the run, and the summary at the end
# (or at the failure) lists the times so far.
set -euo pipefail
cd "$(dirname "$0")/.."

TIMES=()
STARTED=$SECONDS
summary() {
  local status=$?
  printf '\n\033[1m== tier times (wall)\033[0m\n'
  for line in "${TIMES[@]}"; do printf '%s\n' "$line"; done
  printf '%6ss  total%s\n' "$((SECONDS - STARTED))" "$([[ $status -eq 0 ]] || echo " (failed, exit $status)")"
}
trap summary EXIT

# tier "name" command…: run one tier, print and record its wall time.
tier() {
  local name=$1 start=$SECONDS
  shift
  printf '\n\033[1m== %s\033[0m\n' "$name"
  if "$@"; then
    TIMES+=("$(printf '%6ss  %s' "$((SECONDS - start))" "$name")")
    printf '\033[2m   %s: %ss\033[0m\n' "$name" "$((SECONDS - start))"
  else
    local rc=$?
    TIMES+=("$(printf '%6ss  %s  FAILED' "$((SECONDS - start))" "$name")")
    exit "$rc"
  fi
}

tier "generated Lua module is current" node scripts/gen-lua.mjs --check
tier "system packages (redis-server, chromium, promtool, curl, python3, nutcracker)" \
  node --import tsx scripts/ensure-packages.ts redis-server chromium promtool curl python3 nutcracker
tier "typecheck" npx tsc --noEmit
tier "lint" npx eslint --max-warnings=0 .
tier "format (prettier --check; npm run format fixes it)" npx prettier --check --log-level warn "**/*.{ts,tsx,mjs,css}"
tier "build" node --import tsx scripts/build.ts --if-stale
tier "unit + integration (vitest, real redis-server)" npx vitest run
tier "chaos harness (ci profile: nemeses, negative controls, mutants)" node --import tsx scripts/chaos.ts --profile ci --seed 1
tier "end-to-end (Playwright, Debian Chromium)" npx playwright test
