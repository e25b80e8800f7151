package kinds

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	mysqlv1 "terraplane.io/terraplane/apis/mysql/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/tfmodules"
)

// randomProvider is the hashicorp/random provider the database modules use for passwords.
var randomProvider = render.Provider{Name: "random", Source: "hashicorp/random", Version: "3.9.0"}

// databaseConnectionKeys maps the database modules' outputs to connection Secret keys.
var databaseConnectionKeys = map[string]string{
	"endpoint": "endpoint", "port": "port", "username": "username", "password": "password", "database": "database",
}

func postgresqlDatabase() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:             pgdbv1.GroupVersion.WithKind("Database"),
		New:             func() resource.Managed { return &pgdbv1.Database{} },
		NewList:         func() client.ObjectList { return &pgdbv1.DatabaseList{} },
		ClassGVK:        pgdbv1.GroupVersion.WithKind("DatabaseClass"),
		NewClass:        func() resource.NonPortableClass { return &pgdbv1.DatabaseClass{} },
		ProviderGVK:     pgv1.GroupVersion.WithKind("Provider"),
		Modules:         tfmodules.FS,
		ModuleDir:       "postgresql/database",
		ResolveProvider: resolvePostgreSQLProvider,
		ConnectionKeys:  databaseConnectionKeys,
		RecoverCreate:   rerunCreate,
	}
}

func mysqlDatabase() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:             mysqldbv1.GroupVersion.WithKind("Database"),
		New:             func() resource.Managed { return &mysqldbv1.Database{} },
		NewList:         func() client.ObjectList { return &mysqldbv1.DatabaseList{} },
		ClassGVK:        mysqldbv1.GroupVersion.WithKind("DatabaseClass"),
		NewClass:        func() resource.NonPortableClass { return &mysqldbv1.DatabaseClass{} },
		ProviderGVK:     mysqlv1.GroupVersion.WithKind("Provider"),
		Modules:         tfmodules.FS,
		ModuleDir:       "mysql/database",
		ResolveProvider: resolveMySQLProvider,
		ConnectionKeys:  databaseConnectionKeys,
		RecoverCreate:   rerunCreate,
	}
}

func postgreSQLInstance() registry.ClaimKind {
	return registry.ClaimKind{
		GVK:          databasev1.GroupVersion.WithKind("PostgreSQLInstance"),
		New:          func() resource.Claim { return &databasev1.PostgreSQLInstance{} },
		ClassGVK:     databasev1.GroupVersion.WithKind("PostgreSQLInstanceClass"),
		NewClass:     func() resource.PortableClass { return &databasev1.PostgreSQLInstanceClass{} },
		NewClassList: func() client.ObjectList { return &databasev1.PostgreSQLInstanceClassList{} },
		Configurators: map[schema.GroupVersionKind]registry.Configurator{
			pgdbv1.GroupVersion.WithKind("Database"): configurePostgreSQLDatabase,
		},
	}
}

func mySQLInstance() registry.ClaimKind {
	return registry.ClaimKind{
		GVK:          databasev1.GroupVersion.WithKind("MySQLInstance"),
		New:          func() resource.Claim { return &databasev1.MySQLInstance{} },
		ClassGVK:     databasev1.GroupVersion.WithKind("MySQLInstanceClass"),
		NewClass:     func() resource.PortableClass { return &databasev1.MySQLInstanceClass{} },
		NewClassList: func() client.ObjectList { return &databasev1.MySQLInstanceClassList{} },
		Configurators: map[schema.GroupVersionKind]registry.Configurator{
			mysqldbv1.GroupVersion.WithKind("Database"): configureMySQLDatabase,
		},
	}
}

func configurePostgreSQLDatabase(req registry.Request, mg resource.Managed) error {
	cl, cls := req.Claim, req.Class
	claim, ok1 := cl.(*databasev1.PostgreSQLInstance)
	class, ok2 := cls.(*pgdbv1.DatabaseClass)
	db, ok3 := mg.(*pgdbv1.Database)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("configure Database: unexpected types %T, %T, %T", cl, cls, mg)
	}
	p := *class.SpecTemplate.ForProvider.DeepCopy()
	db.Spec.ForProvider = p
	return fillDatabase("PostgreSQL", claim, claim.Spec.DatabaseParameters, class.Name, p.EngineVersion,
		&db.Spec.ForProvider.DatabaseName, &db.Spec.ForProvider.RoleName)
}

func configureMySQLDatabase(req registry.Request, mg resource.Managed) error {
	cl, cls := req.Claim, req.Class
	claim, ok1 := cl.(*databasev1.MySQLInstance)
	class, ok2 := cls.(*mysqldbv1.DatabaseClass)
	db, ok3 := mg.(*mysqldbv1.Database)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("configure Database: unexpected types %T, %T, %T", cl, cls, mg)
	}
	p := *class.SpecTemplate.ForProvider.DeepCopy()
	db.Spec.ForProvider = p
	return fillDatabase("MySQL", claim, claim.Spec.DatabaseParameters, class.Name, p.EngineVersion,
		&db.Spec.ForProvider.DatabaseName, &db.Spec.ForProvider.RoleName)
}

// fillDatabase checks that the class can satisfy the claim and derives the database
// and role names from the claim where the class leaves them empty.
func fillDatabase(engine string, claim metav1.Object, want databasev1.DatabaseParameters, class, offered string, database, role *string) error {
	if err := checkDatabaseClaim(engine, want, offered, class); err != nil {
		return err
	}
	if *database == "" {
		*database = Identifier(claim.GetNamespace(), claim.GetName(), string(claim.GetUID()), 63)
	}
	if *role == "" {
		*role = Identifier(claim.GetNamespace(), claim.GetName(), string(claim.GetUID()), 31)
	}
	return nil
}

// checkDatabaseClaim refuses what a class made of one existing server cannot give.
func checkDatabaseClaim(engine string, want databasev1.DatabaseParameters, offered, class string) error {
	if want.EngineVersion != "" && offered != "" && !versionMatches(want.EngineVersion, offered) {
		return resource.UserErrorf("ClassCannotSatisfy", "class %s offers %s %s, but the claim asks for engineVersion %s; pick another class or version",
			class, engine, offered, want.EngineVersion)
	}
	if want.HighAvailability {
		return resource.UserErrorf("ClassCannotSatisfy", "class %s places databases on one existing %s server and cannot provide highAvailability; pick another class",
			class, engine)
	}
	return nil
}

// versionMatches reports whether the requested version is the offered one or a refinement of it ("15" ~ "15", "10.11" ~ "10").
func versionMatches(want, offered string) bool {
	return want == offered || strings.HasPrefix(want, offered+".") || strings.HasPrefix(offered, want+".")
}

var notIdentifierChars = regexp.MustCompile(`[^a-z0-9_]+`)

// Identifier derives a unique SQL identifier of at most max characters from a claim.
func Identifier(namespace, name, uid string, max int) string {
	base := notIdentifierChars.ReplaceAllString(strings.ToLower(namespace+"_"+name), "_")
	suffix := strings.ReplaceAll(uid, "-", "")
	if len(suffix) > 8 {
		suffix = suffix[:8]
	}
	if base == "" || (base[0] >= '0' && base[0] <= '9') {
		base = "db_" + base
	}
	if m := max - len(suffix) - 1; len(base) > m {
		base = base[:m]
	}
	return strings.TrimRight(base, "_") + "_" + suffix
}

func resolvePostgreSQLProvider(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
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
		Inputs: map[string]any{"host": p.Spec.Host, "port": port},
	}, nil
}

func resolveMySQLProvider(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
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
