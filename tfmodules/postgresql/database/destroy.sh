#!/bin/sh
# Drops the database and role; safe to run again.
set -eu
command -v psql >/dev/null 2>&1 || { echo "psql not found on the controller's PATH: install the PostgreSQL client (Debian: postgresql-client)" >&2; exit 1; }
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
\getenv role TP_ROLE
\getenv database TP_DATABASE
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'database') \gexec
SELECT format('DROP ROLE IF EXISTS %I', :'role') \gexec
SQL
