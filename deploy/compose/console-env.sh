#!/bin/sh
# The entrypoint of the consoles and lock services in docker-compose.yml: their secrets come from the compose secret files
# into its own environment (what `docker inspect` shows is the compose file's environment, which
# holds none of them), then the image's command runs in its place.
#   redis_password → REDLOCK_NODES (the five masters' URLs carry it)
#   api_key        → REDLOCK_API_KEYS as the key named "compose" (the lock service)
#   metrics_token  → REDLOCK_METRICS_TOKEN (Prometheus's scrape, deploy/prometheus/prometheus.yml)
#   session_secret → REDLOCK_SESSION_SECRET (one for every replica: a session is valid on each)
#   admin_password → REDLOCK_ADMIN_PASSWORD (the operator's, the same on every console)
set -eu
secret() {
  value=$(cat "/run/secrets/$1")
  [ -n "$value" ] || { echo "the $1 secret is empty: run sh deploy/compose/secrets.sh" >&2; exit 1; }
  printf '%s' "$value"
}
password=$(secret redis_password)
REDLOCK_NODES="redis://:$password@redis-1:6379,redis://:$password@redis-2:6379,redis://:$password@redis-3:6379,redis://:$password@redis-4:6379,redis://:$password@redis-5:6379"
REDLOCK_API_KEYS="compose=$(secret api_key)"
REDLOCK_METRICS_TOKEN=$(secret metrics_token)
REDLOCK_SESSION_SECRET=$(secret session_secret)
REDLOCK_ADMIN_PASSWORD=$(secret admin_password)
export REDLOCK_NODES REDLOCK_API_KEYS REDLOCK_METRICS_TOKEN REDLOCK_SESSION_SECRET REDLOCK_ADMIN_PASSWORD
exec "$@"
