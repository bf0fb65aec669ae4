#!/bin/sh
# Run once by the postgres image's entrypoint on an empty data directory.
set -e
psql -v ON_ERROR_STOP=1 --no-psqlrc -U "$POSTGRES_USER" -d "$POSTGRES_DB" \
    -v schema=lab -f /lab/schema.sql -f /lab/seed.sql
