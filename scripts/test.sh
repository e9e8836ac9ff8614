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

# together "name" "command" ["name" "command"]…: run tiers at once; print each one's output and time.
together() {
  local dir i rc secs failed=0 start=$SECONDS
  dir=$(mktemp -d)
  local -a names=()
  while (($# > 0)); do
    i=${#names[@]}
    names+=("$1")
    (
      s=$SECONDS
      set +e
      bash -c "$2" >"$dir/$i.out" 2>&1
      echo "$? $((SECONDS - s))" >"$dir/$i.rc"
    ) &
    shift 2
  done
  wait
  for i in "${!names[@]}"; do
    read -r rc secs <"$dir/$i.rc"
    printf '\n\033[1m== %s\033[0m (ran concurrently)\n' "${names[$i]}"
    cat "$dir/$i.out"
    if ((rc == 0)); then
      TIMES+=("$(printf '%6ss  %s (concurrent)' "$secs" "${names[$i]}")")
      printf '\033[2m   %s: %ss\033[0m\n' "${names[$i]}" "$secs"
    else
      TIMES+=("$(printf '%6ss  %s (concurrent)  FAILED' "$secs" "${names[$i]}")")
      failed=$rc
    fi
  done
  rm -rf "$dir"
  TIMES+=("$(printf '%6ss  = wall time of the concurrent tiers above' "$((SECONDS - start))")")
  if ((failed != 0)); then exit "$failed"; fi
}

tier "generated Lua module is current" node scripts/gen-lua.mjs --check
tier "system packages (redis-server, chromium, promtool, curl, python3, nutcracker)" \
  node --import tsx scripts/ensure-packages.ts redis-server chromium promtool curl python3 nutcracker
# Typecheck, lint and format keep caches under node_modules/.cache (content-keyed, so a checkout's new
# mtimes do not void them): on a clean clone they are empty and save nothing; in the developer loop
# only the files changed since the last run are read again.
# The three are single-threaded: on two cores they run at once, each tier's output printed whole when
# all have ended (a failure in any stops the run there, after the others' verdicts).
together "typecheck" "npm run --silent typecheck" \
  "lint" "npm run --silent lint" \
  "format (prettier --check; npm run format fixes it)" "npm run --silent format:check -- --log-level warn"
tier "build" node --import tsx scripts/build.ts --if-stale
tier "unit + integration (vitest, real redis-server)" npx vitest run
# The tests that hold the lock service's latency under an attack to its calm baseline, one file at a
# time with nothing beside them (vitest.config.ts LATENCY_UNDER_ATTACK).
tier "latency under attack (vitest, one file at a time)" env VITEST_ALONE=1 npx vitest run
tier "chaos harness (ci profile: nemeses, negative controls, mutants)" node --import tsx chaos/run.ts --profile ci --seed 1
tier "end-to-end (Playwright, Debian Chromium)" npx playwright test
