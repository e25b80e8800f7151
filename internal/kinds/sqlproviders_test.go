package kinds

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestRequireClient: a client on the PATH lets the kind run; a missing one is a user
// error (Synced=False, one event) whose reason and message say what is missing and what
// to do, not a failure of terraform halfway through an apply.
func TestRequireClient(t *testing.T) {
	found := func(name string) (string, error) { return "/usr/bin/" + name, nil }
	missing := func(string) (string, error) { return "", errors.New("executable file not found in $PATH") }
	cases := map[string]struct {
		lookPath     func(string) (string, error)
		kind, client string
		debian       string
		want         []string // in the message; nil: no error
	}{
		"psql present":  {found, "PostgreSQL Database", "psql", "postgresql-client", nil},
		"psql missing":  {missing, "PostgreSQL Database", "psql", "postgresql-client", []string{"PostgreSQL Database kind runs psql", "not on the controller's PATH", "postgresql-client", "docs/install.md"}},
		"mysql missing": {missing, "MySQL Database", "mysql", "mariadb-client", []string{"MySQL Database kind runs mysql", "mariadb-client"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := requireClient(tc.lookPath, tc.kind, tc.client, tc.debian)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			u, ok := resource.AsUserError(err)
			if !ok {
				t.Fatalf("err = %v, want a user error", err)
			}
			if d := cmp.Diff(common.ReasonClientMissing, u.Reason); d != "" {
				t.Errorf("reason (-want +got):\n%s", d)
			}
			for _, w := range tc.want {
				if !strings.Contains(u.Message, w) {
					t.Errorf("message %q lacks %q", u.Message, w)
				}
			}
		})
	}
}

// TestResolversRequireTheirClient: with an empty PATH (the default image's, as far as
// psql and mysql go), both database kinds stop at the check, before reading anything.
func TestResolversRequireTheirClient(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for name, resolve := range map[string]func() error{
		"postgresql": func() error {
			_, err := resolvePostgreSQLProvider(context.Background(), nil, &pgdbv1.Database{})
			return err
		},
		"mysql": func() error {
			_, err := resolveMySQLProvider(context.Background(), nil, &mysqldbv1.Database{})
			return err
		},
	} {
		u, ok := resource.AsUserError(resolve())
		if !ok || u.Reason != common.ReasonClientMissing {
			t.Errorf("%s: %v, want a %s user error", name, resolve(), common.ReasonClientMissing)
		}
	}
}
