#!/bin/sh
# Creates (or converges) the role and database; safe to run again.
set -eu
command -v psql >/dev/null 2>&1 || { echo "psql not found on the controller's PATH: install the PostgreSQL client (Debian: postgresql-client)" >&2; exit 1; }
if [ -n "$TP_ENGINE_VERSION" ]; then
	num=$(psql -X -tA -v ON_ERROR_STOP=1 -c "SHOW server_version_num")
	major=$((num / 10000))
	want=${TP_ENGINE_VERSION%%.*}
	[ "$major" = "$want" ] || { echo "the server runs PostgreSQL $major, but the class promises $TP_ENGINE_VERSION" >&2; exit 1; }
fi
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
\getenv role TP_ROLE
\getenv password TP_PASSWORD
\getenv database TP_DATABASE
\getenv limit TP_CONNECTION_LIMIT
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L CONNECTION LIMIT %s', :'role', :'password', :'limit') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'database', :'role') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'database') \gexec
SQL
