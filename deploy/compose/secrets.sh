#!/bin/sh
# The secret files docker-compose.yml reads, made once: ./secrets/redis-password (the masters'),
# ./secrets/api-key (a lock-service API key), ./secrets/metrics-token (Prometheus's scrape),
# ./secrets/session-secret (signs every replica's session cookies) and ./secrets/admin-password
# (the operator's login on every console).
# Each is 48 hex characters (URL-safe: the password goes into the masters' URLs). An existing file
# is kept, so a restart keeps its keys; write your own values into them instead if you like.
# The directory is 0700 (only you on this host); the files are 0644 inside it, because the
# containers read them as their own users (redis, node, nobody) and a bind-mounted secret keeps
# the host's owner and mode.
#   sh deploy/compose/secrets.sh [directory]      (default: ./secrets beside docker-compose.yml)
set -eu
dir=${1:-$(dirname "$0")/../../secrets}
mkdir -p "$dir"
chmod 700 "$dir"
for name in redis-password api-key metrics-token session-secret admin-password; do
  if [ -s "$dir/$name" ]; then continue; fi
  value=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
  (umask 022 && printf '%s' "$value" > "$dir/$name")
  echo "wrote $dir/$name"
done
