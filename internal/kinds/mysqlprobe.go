package kinds

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"

	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// observeMySQL reads what a MySQL or MariaDB server has of a Database before each plan,
// as the module's observed input: whether the database and the user exist, the user's
// connection limit, and the mark converge.sh left. Terraform cannot read a MySQL server
// itself (no provider, data source or state backend here speaks MySQL), so the module
// compares this with its inputs to see drift, as the PostgreSQL module does through the
// pg backend.
func observeMySQL(ctx context.Context, mg resource.Managed, pc *registry.ProviderConfig) (map[string]any, error) {
	p := mg.(*mysqldbv1.Database).Spec.ForProvider
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(pc.Env["MYSQL_HOST"], pc.Env["MYSQL_TCP_PORT"])
	cfg.User, cfg.Passwd = pc.Env["TP_ADMIN_USER"], pc.Env["MYSQL_PWD"]
	cfg.Timeout = 10 * time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("observe mysql server: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	observed := map[string]any{"database": false, "user": false, "connection_limit": 0, "mark": ""}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", p.DatabaseName).Scan(&n); err != nil {
		return nil, fmt.Errorf("observe mysql server %s: %w", cfg.Addr, err)
	}
	observed["database"] = n > 0
	var limit int
	switch err := db.QueryRowContext(ctx, "SELECT max_user_connections FROM mysql.user WHERE User = ? AND Host = '%'", p.RoleName).Scan(&limit); {
	case err == nil:
		observed["user"], observed["connection_limit"] = true, limit
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("observe mysql user %s: %w", p.RoleName, err)
	}
	var mark string
	switch err := db.QueryRowContext(ctx, "SELECT mark FROM terraplane.marks WHERE db = ?", p.DatabaseName).Scan(&mark); {
	case err == nil:
		observed["mark"] = mark
	case !errors.Is(err, sql.ErrNoRows) && !isMissingTable(err):
		return nil, fmt.Errorf("observe mysql mark of %s: %w", p.DatabaseName, err)
	}
	return map[string]any{"observed": observed}, nil
}

// isMissingTable is MySQL's "unknown database" or "table doesn't exist": no converge has
// left a mark on this server yet.
func isMissingTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1049 || me.Number == 1146)
}
