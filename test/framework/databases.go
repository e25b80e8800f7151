package framework

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"terraplane.io/terraplane/internal/devenv"
)

// Server is a database server a test started on loopback.
type Server struct {
	// Host and Port are where it listens.
	Host string
	Port int
	// AdminUser and AdminPassword log in as an administrator over TCP.
	AdminUser, AdminPassword string
	stop                     func()
}

// Stop stops the server.
func (s *Server) Stop() {
	if s != nil && s.stop != nil {
		s.stop()
	}
}

// pgBin finds a PostgreSQL server binary.
func pgBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found: PostgreSQL server binaries are needed (`make tools-test` installs them)", name)
}

// StartPostgres starts a PostgreSQL server on 127.0.0.1 as the "postgres" OS user, with
// password authentication and an admin "admin".
func StartPostgres(dir string) (*Server, error) {
	initdb, err := pgBin("initdb")
	if err != nil {
		return nil, err
	}
	pgctl, err := pgBin("pg_ctl")
	if err != nil {
		return nil, err
	}
	cred, err := osUser("postgres")
	if err != nil {
		return nil, err
	}
	port, err := devenv.FreePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", Port: port, AdminUser: "admin", AdminPassword: "admin-pw-" + strconv.Itoa(port)}
	data := filepath.Join(dir, "pgdata")
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(pwfile, []byte(s.AdminPassword+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return nil, err
	}
	if err := os.Chown(pwfile, int(cred.Uid), int(cred.Gid)); err != nil {
		return nil, err
	}
	if err := runAs(cred, initdb, "-D", data, "-U", s.AdminUser, "--pwfile", pwfile, "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %w", err)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, dir)
	if err := runAs(cred, pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		return nil, fmt.Errorf("start postgres: %w\n%s", err, log)
	}
	s.stop = func() { _ = runAs(cred, pgctl, "-D", data, "-m", "immediate", "-w", "stop") }
	return s, nil
}

// StartMariaDB starts a MariaDB server on 127.0.0.1 with an admin "admin" that may log in over TCP.
func StartMariaDB(dir string) (*Server, error) {
	var bins [3]string
	for i, name := range []string{"mariadb-install-db", "mariadbd", "mariadb"} {
		p, err := exec.LookPath(name)
		if err != nil {
			if p, err = exec.LookPath("/usr/sbin/" + name); err != nil {
				return nil, fmt.Errorf("%s not found: MariaDB is needed (`make tools-test` installs it)", name)
			}
		}
		bins[i] = p
	}
	port, err := devenv.FreePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", Port: port, AdminUser: "admin", AdminPassword: "admin-pw-" + strconv.Itoa(port)}
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "mysqld.sock")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	install := exec.Command(bins[0], "--no-defaults", "--user=root", "--datadir="+data, "--auth-root-authentication-method=socket", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
	}
	server := exec.Command(bins[1], "--no-defaults", "--user=root", "--datadir="+data, "--socket="+sock,
		"--port="+strconv.Itoa(port), "--bind-address=127.0.0.1", "--skip-log-bin", "--innodb-flush-log-at-trx-commit=0",
		"--pid-file="+filepath.Join(dir, "mysqld.pid"), "--log-error="+filepath.Join(dir, "error.log"))
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := server.Start(); err != nil {
		return nil, fmt.Errorf("start mariadbd: %w", err)
	}
	s.stop = func() { _ = server.Process.Signal(syscall.SIGTERM); _, _ = server.Process.Wait() }
	sql := fmt.Sprintf("CREATE USER '%[1]s'@'%%' IDENTIFIED BY '%[2]s'; GRANT ALL PRIVILEGES ON *.* TO '%[1]s'@'%%' WITH GRANT OPTION;", s.AdminUser, s.AdminPassword)
	var out []byte
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if out, err = exec.Command(bins[2], "--no-defaults", "-S", sock, "-u", "root", "-e", sql).CombinedOutput(); err == nil {
			return s, nil
		}
	}
	s.Stop()
	log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
	return nil, fmt.Errorf("mariadb did not come up: %w\n%s\n%s", err, out, log)
}

func osUser(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w (PostgreSQL refuses to run as root; `make tools-test` installs the postgresql package, which creates it)", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func runAs(cred *syscall.Credential, bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}
