#!/bin/sh
# Creates the role and database, or brings them back to what the module asks for; safe
# to run again. It keeps the server probe current (the view terraplane.states that the
# module's terraform_remote_state reads) and marks the database with this converge's
# mark, so that the next plan finds the server in step.
set -eu
command -v psql >/dev/null 2>&1 || { echo "psql not found on the controller's PATH: install the PostgreSQL client (Debian: postgresql-client)" >&2; exit 1; }
if [ -n "$TP_ENGINE_VERSION" ]; then
	num=$(psql -X -tA -v ON_ERROR_STOP=1 -c "SHOW server_version_num")
	major=$((num / 10000))
	want=${TP_ENGINE_VERSION%%.*}
	[ "$major" = "$want" ] || { echo "the server runs PostgreSQL $major, but the class promises $TP_ENGINE_VERSION" >&2; exit 1; }
fi
[ -z "$TP_DRIFT" ] || echo "correcting drift on the server: $TP_DRIFT"
sh "$(dirname "$0")/probe.sh"
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
\getenv role TP_ROLE
\getenv password TP_PASSWORD
\getenv database TP_DATABASE
\getenv limit TP_CONNECTION_LIMIT
\getenv mark TP_MARK
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L CONNECTION LIMIT %s', :'role', :'password', :'limit') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'database', :'role') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'database') \gexec
SELECT format('ALTER DATABASE %I OWNER TO %I', :'database', :'role') \gexec
SELECT format('COMMENT ON DATABASE %I IS %L', :'database', :'mark') \gexec
SQL
