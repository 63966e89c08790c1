#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL cluster for the tests: initdb into a temporary
# directory owned by an unprivileged user, listening only on a Unix socket in that
# directory (no TCP port), trust authentication for the local user "switchyard".
#
#   eval "$(scripts/pg-test-cluster.sh start)"   # exports SWITCHYARD_TEST_POSTGRES and PG_TEST_DIR
#   scripts/pg-test-cluster.sh stop "$PG_TEST_DIR"
#
# Without PostgreSQL's server binaries (Debian: postgresql) it prints nothing and exits 1.
set -euo pipefail

bindir=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && bindir=$d
done
if [ -z "$bindir" ] && command -v pg_config >/dev/null; then
  bindir=$(pg_config --bindir)
fi
[ -n "$bindir" ] && [ -x "$bindir/initdb" ] || { echo "pg-test-cluster: no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 1; }

# initdb and postgres refuse to run as root: run them as an unprivileged user.
as_user() {
  if [ "$(id -u)" = 0 ]; then
    local u=postgres
    id -u "$u" >/dev/null 2>&1 || u=nobody
    runuser -u "$u" -- "$@"
  else
    "$@"
  fi
}

case "${1:-}" in
start)
  dir=$(mktemp -d /tmp/switchyard-pg.XXXXXX)
  chmod 755 "$dir"
  [ "$(id -u)" = 0 ] && chown "$(id -u postgres 2>/dev/null || id -u nobody)" "$dir"
  as_user "$bindir/initdb" -D "$dir/data" -U switchyard -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  as_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-k $dir -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start >/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
  echo "export PG_TEST_DIR=$dir"
  echo "export SWITCHYARD_TEST_POSTGRES='postgres://switchyard@/postgres?host=$dir&sslmode=disable'"
  ;;
stop)
  dir=${2:?usage: pg-test-cluster.sh stop DIR}
  as_user "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: pg-test-cluster.sh start | stop DIR" >&2
  exit 2
  ;;
esac
