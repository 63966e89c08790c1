#!/usr/bin/env bash
# Runs Switchyard's whole test suite. On a fresh machine it first installs what the sandbox,
# PostgreSQL and browser tests need when it can: bubblewrap, python3, python3-venv,
# postgresql and chromium (Debian packages, as root; chromium drives the web console's
# test) and the WASI CPython interpreter (from the npm registry). It
# starts a throwaway PostgreSQL cluster (scripts/pg-test-cluster.sh: a temporary directory,
# a Unix socket, no TCP port) for the store, queue and replica tests and removes it at the
# end. Without them those tests skip with a message saying what is missing; everything
# else needs only Go.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  [ -x /usr/bin/python3 ] || missing+=(python3)
  dpkg -s python3-venv >/dev/null 2>&1 || missing+=(python3-venv)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "test.sh: installing ${missing[*]}" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
      || echo "test.sh: could not install ${missing[*]}; the sandbox and PostgreSQL tests that need them will skip" >&2
  fi
  # Apart, so that a distribution without a chromium package still gets the others.
  if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
    echo "test.sh: installing chromium (the web console's browser test)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "test.sh: could not install chromium; the console's browser test will skip" >&2
  fi
fi
if [ -x scripts/install-python-wasi.sh ] && command -v npm >/dev/null; then
  scripts/install-python-wasi.sh || echo "test.sh: could not install the WASI python; wasm sandbox tests will skip" >&2
fi

if [ -z "${SWITCHYARD_TEST_POSTGRES:-}" ]; then
  if pg_env=$(scripts/pg-test-cluster.sh start); then
    eval "$pg_env"
    trap 'scripts/pg-test-cluster.sh stop "$PG_TEST_DIR"' EXIT
  else
    echo "test.sh: no PostgreSQL cluster; the PostgreSQL tests will skip" >&2
  fi
fi

go test -count=1 -timeout 20m ./...
