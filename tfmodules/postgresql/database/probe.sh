#!/bin/sh
# Makes (or makes current) the server probe of probe.sql; safe to run again.
set -eu
command -v psql >/dev/null 2>&1 || { echo "psql not found on the controller's PATH: install the PostgreSQL client (Debian: postgresql-client)" >&2; exit 1; }
psql -X -q -v ON_ERROR_STOP=1 -o /dev/null -f "$(dirname "$0")/probe.sql"
