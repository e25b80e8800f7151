package kinds

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	mysqlv1 "terraplane.io/terraplane/apis/mysql/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// randomProvider is the hashicorp/random provider the database modules use for passwords:
// the major version they are tested with (3.9.0); each module's committed dependency lock
// fixes the exact version.
var randomProvider = render.Provider{Name: "random", Source: "hashicorp/random", Version: "~> 3.9"}

func resolvePostgreSQLProvider(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
	if err := requireClient(exec.LookPath, "PostgreSQL Database", "psql", "postgresql-client"); err != nil {
		return nil, err
	}
	p := &pgv1.Provider{}
	if err := getProvider(ctx, c, mg, "postgresql.terraplane.io", p); err != nil {
		return nil, err
	}
	creds, err := readSecret(ctx, c, p.Namespace, p.Spec.CredentialsSecretRef.Name, pgv1.CredentialsUsername, pgv1.CredentialsPassword)
	if err != nil {
		return nil, err
	}
	port := portOr(p.Spec.Port, 5432)
	return &registry.ProviderConfig{
		Providers: []render.Provider{randomProvider},
		Env: map[string]string{
			"PGHOST": p.Spec.Host, "PGPORT": strconv.Itoa(port), "PGDATABASE": "postgres",
			"PGSSLMODE": orDefault(p.Spec.SSLMode, "prefer"),
			"PGUSER":    string(creds[pgv1.CredentialsUsername]), "PGPASSWORD": string(creds[pgv1.CredentialsPassword]),
		},
		Inputs: map[string]any{"host": p.Spec.Host, "port": port, "ssl_mode": orDefault(p.Spec.SSLMode, "prefer")},
	}, nil
}

func resolveMySQLProvider(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
	if err := requireClient(exec.LookPath, "MySQL Database", "mysql", "mariadb-client"); err != nil {
		return nil, err
	}
	p := &mysqlv1.Provider{}
	if err := getProvider(ctx, c, mg, "mysql.terraplane.io", p); err != nil {
		return nil, err
	}
	creds, err := readSecret(ctx, c, p.Namespace, p.Spec.CredentialsSecretRef.Name, mysqlv1.CredentialsUsername, mysqlv1.CredentialsPassword)
	if err != nil {
		return nil, err
	}
	port := portOr(p.Spec.Port, 3306)
	return &registry.ProviderConfig{
		Providers: []render.Provider{randomProvider},
		Env: map[string]string{
			"MYSQL_HOST": p.Spec.Host, "MYSQL_TCP_PORT": strconv.Itoa(port),
			"TP_ADMIN_USER": string(creds[mysqlv1.CredentialsUsername]), "MYSQL_PWD": string(creds[mysqlv1.CredentialsPassword]),
		},
		Inputs: map[string]any{"host": p.Spec.Host, "port": port},
	}, nil
}

// requireClient refuses a kind whose module runs the command-line client (through
// terraform's local-exec) when lookPath does not find it on the controller's PATH, which
// terraform's provisioners share: the default image, being static, carries neither psql
// nor mysql. debian is the Debian package that holds the client.
func requireClient(lookPath func(string) (string, error), kind, client, debian string) error {
	if _, err := lookPath(client); err == nil {
		return nil
	}
	return resource.UserErrorf(common.ReasonClientMissing,
		"the %s kind runs %s, which is not on the controller's PATH (Terraplane's default image does not carry it); "+
			"run the controller from an image that adds it (e.g. Debian's %s; docs/install.md, section 1) or claim through a class of another kind",
		kind, client, debian)
}

// getProvider reads the Provider that mg's providerRef names, turning absence into an actionable user error.
func getProvider(ctx context.Context, c client.Client, mg resource.Managed, group string, p client.Object) error {
	ref := mg.GetManagedSpec().ProviderRef
	if ref == nil || ref.Name == "" {
		return resource.UserErrorf("ProviderRefMissing", "spec.providerRef is required: name a Provider (%s) in namespace %s", group, mg.GetNamespace())
	}
	namespace, name := mg.GetNamespace(), ref.Name
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return resource.UserErrorf("ProviderNotFound", "Provider %s/%s (%s) does not exist; create it or fix providerRef", namespace, name, group)
		}
		return fmt.Errorf("get provider: %w", err)
	}
	return nil
}

func portOr(p int32, def int) int {
	if p == 0 {
		return def
	}
	return int(p)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
