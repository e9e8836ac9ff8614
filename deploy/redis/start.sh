#!/bin/sh
# The entrypoint of each master in docker-compose.yml: the password comes from the compose secret
# file and goes into a config file redis-server includes (redis.conf), never onto a command line
# (`docker inspect` and `ps` show those) nor into the environment. The image's own entrypoint
# then starts redis-server as the unprivileged redis user.
set -eu
umask 077
password=$(cat /run/secrets/redis_password)
[ -n "$password" ] || { echo "the redis_password secret is empty: run sh deploy/compose/secrets.sh" >&2; exit 1; }
printf 'requirepass "%s"\n' "$password" > /run/redis-auth/auth.conf
chown -R redis:redis /run/redis-auth
exec docker-entrypoint.sh redis-server /usr/local/etc/redis/redis.conf
