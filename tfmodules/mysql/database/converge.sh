#!/bin/sh
# Creates the user and database, or brings them back to what the module asks for; safe
# to run again. Names are validated by the CRD ([a-z0-9_]) and the password is
# alphanumeric, so they are safe inside quotes.
set -eu
command -v mysql >/dev/null 2>&1 || { echo "mysql not found on the controller's PATH: install the MySQL/MariaDB client (Debian: mariadb-client)" >&2; exit 1; }
client() { mysql --protocol=TCP -h "$MYSQL_HOST" -P "$MYSQL_TCP_PORT" -u "$TP_ADMIN_USER" --batch --skip-column-names "$@"; }
if [ -n "$TP_ENGINE_VERSION" ]; then
	version=$(client -e "SELECT VERSION()")
	case "$version" in
	"$TP_ENGINE_VERSION"*) ;;
	*) echo "the server runs $version, but the class promises $TP_ENGINE_VERSION" >&2; exit 1 ;;
	esac
fi
limit=$TP_CONNECTION_LIMIT
[ "$limit" -ge 0 ] || limit=0
client <<SQL
CREATE USER IF NOT EXISTS '$TP_ROLE'@'%' IDENTIFIED BY '$TP_PASSWORD';
ALTER USER '$TP_ROLE'@'%' IDENTIFIED BY '$TP_PASSWORD' WITH MAX_USER_CONNECTIONS $limit;
CREATE DATABASE IF NOT EXISTS \`$TP_DATABASE\`;
GRANT ALL PRIVILEGES ON \`$TP_DATABASE\`.* TO '$TP_ROLE'@'%';
CREATE DATABASE IF NOT EXISTS terraplane;
CREATE TABLE IF NOT EXISTS terraplane.marks (db VARCHAR(64) PRIMARY KEY, mark VARCHAR(128) NOT NULL);
REPLACE INTO terraplane.marks (db, mark) VALUES ('$TP_DATABASE', '$TP_MARK');
SQL
