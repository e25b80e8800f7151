#!/bin/sh
# Drops the database and user; safe to run again.
set -eu
command -v mysql >/dev/null 2>&1 || { echo "mysql not found on the controller's PATH: install the MySQL/MariaDB client (Debian: mariadb-client)" >&2; exit 1; }
mysql --protocol=TCP -h "$MYSQL_HOST" -P "$MYSQL_TCP_PORT" -u "$TP_ADMIN_USER" --batch <<SQL
DROP DATABASE IF EXISTS \`$TP_DATABASE\`;
DROP USER IF EXISTS '$TP_ROLE'@'%';
CREATE DATABASE IF NOT EXISTS terraplane;
CREATE TABLE IF NOT EXISTS terraplane.marks (db VARCHAR(64) PRIMARY KEY, mark VARCHAR(128) NOT NULL);
DELETE FROM terraplane.marks WHERE db = '$TP_DATABASE';
SQL
