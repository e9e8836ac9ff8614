#!/usr/bin/env bash
# npm test: every check, in the order that fails fastest. Needs redis-server and chromium
# (installed with apt-get when missing and running as root, otherwise a clear message).
# Each tier prints its wall time; the first failing tier stops the run, and the summary at the end
# (or at the failure) lists the times so far.
set -euo pipefail
cd "$(dirname "$0")/.."

TIMES=()
STARTED=$SECONDS
CPU_FILE=$(mktemp)
# cpu_used FILE: the CPU seconds (user + system) of every child this shell has waited for so far,
# from bash's `times` written to FILE by the caller in its own shell (its second line: children).
cpu_used() {
  awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] } printf "%d", t + 0.5 }' "$1"
}
times >"$CPU_FILE"
CPU_STARTED=$(cpu_used "$CPU_FILE")
summary() {
  local status=$?
  times >"$CPU_FILE"
  local cpu=$(($(cpu_used "$CPU_FILE") - CPU_STARTED)) wall=$((SECONDS - STARTED))
  printf '\n\033[1m== tier times (wall, and CPU: user + system of the tier'"'"'s processes)\033[0m\n'
  for line in "${TIMES[@]}"; do printf '%s\n' "$line"; done
  printf '%6ss  %6s CPU-s  total%s\n' "$wall" "$cpu" "$([[ $status -eq 0 ]] || echo " (failed, exit $status)")"
  # What the CPU alone needs on this machine's cores: no ordering of the tiers can beat it.
  printf '        %s cores: at best %ss if every core were busy throughout\n' "$(nproc)" "$((cpu / $(nproc)))"
  rm -f "$CPU_FILE"
}
trap summary EXIT

# tier "name" command…: run one tier, print and record its wall and CPU time.
tier() {
  local name=$1 start=$SECONDS cpu0
  shift
  times >"$CPU_FILE"
  cpu0=$(cpu_used "$CPU_FILE")
  printf '\n\033[1m== %s\033[0m\n' "$name"
  local rc=0
  "$@" || rc=$?
  times >"$CPU_FILE"
  local line
  line=$(printf '%6ss  %6s CPU-s  %s' "$((SECONDS - start))" "$(($(cpu_used "$CPU_FILE") - cpu0))" "$name")
  if ((rc == 0)); then
    TIMES+=("$line")
    printf '\033[2m   %s\033[0m\n' "$line"
  else
    TIMES+=("$line  FAILED")
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
      rc=$?
      times >"$dir/$i.times"
      echo "$rc $((SECONDS - s)) $(cpu_used "$dir/$i.times")" >"$dir/$i.rc"
    ) &
    shift 2
  done
  wait
  for i in "${!names[@]}"; do
    read -r rc secs cpu <"$dir/$i.rc"
    printf '\n\033[1m== %s\033[0m (ran concurrently)\n' "${names[$i]}"
    cat "$dir/$i.out"
    local line
    line=$(printf '%6ss  %6s CPU-s  %s (concurrent)' "$secs" "$cpu" "${names[$i]}")
    if ((rc == 0)); then
      TIMES+=("$line")
      printf '\033[2m   %s\033[0m\n' "$line"
    else
      TIMES+=("$line  FAILED")
      failed=$rc
    fi
  done
  rm -rf "$dir"
  TIMES+=("$(printf '%6ss  %6s        = wall time of the concurrent tiers above' "$((SECONDS - start))" '')")
  if ((failed != 0)); then exit "$failed"; fi
}

tier "generated Lua module is current" node scripts/gen-lua.mjs --check
tier "system packages (redis-server, chromium, promtool, curl, python3, nutcracker, haproxy)" \
  node --import tsx scripts/ensure-packages.ts redis-server chromium promtool curl python3 nutcracker haproxy
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
