package kinds

import (
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	mysqlv1 "terraplane.io/terraplane/apis/mysql/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/tfmodules"
)

// databaseConnectionKeys maps the database modules' outputs to connection Secret keys.
var databaseConnectionKeys = map[string]string{
	"endpoint": "endpoint", "port": "port", "username": "username", "password": "password", "database": "database",
}

// PostgreSQLInstanceGVK and MySQLInstanceGVK are the portable database claim kinds.
var (
	PostgreSQLInstanceGVK = databasev1.GroupVersion.WithKind("PostgreSQLInstance")
	MySQLInstanceGVK      = databasev1.GroupVersion.WithKind("MySQLInstance")
)

// postgresqlDatabase is a database and its owner role on an existing PostgreSQL server.
func postgresqlDatabase() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:         pgdbv1.DatabaseGroupVersionKind,
		ClassGVK:    pgdbv1.DatabaseClassGroupVersionKind,
		ProviderGVK: pgv1.ProviderGroupVersionKind,
		Terraform: &registry.TerraformKind{
			Modules:         tfmodules.FS,
			ModuleDir:       "postgresql/database",
			ResolveProvider: resolvePostgreSQLProvider,
			ConnectionKeys:  databaseConnectionKeys,
			RecoverCreate:   rerunCreate,
			// converge re-runs the idempotent SQL that makes the database match its inputs.
			HarmlessReplacements: []string{"terraform_data.converge"},
		},
		Meets: map[schema.GroupVersionKind]registry.Configurator{PostgreSQLInstanceGVK: configurator(
			func(claim *databasev1.PostgreSQLInstance, class *pgdbv1.DatabaseClass, db *pgdbv1.Database) error {
				return fillDatabase("PostgreSQL", claim, claim.Spec.DatabaseParameters, class.Name, &db.Spec.ForProvider.DatabaseName, &db.Spec.ForProvider.RoleName, db.Spec.ForProvider.EngineVersion)
			})},
	}
}

// mysqlDatabase is a database and its owner user on an existing MySQL or MariaDB server.
func mysqlDatabase() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:         mysqldbv1.DatabaseGroupVersionKind,
		ClassGVK:    mysqldbv1.DatabaseClassGroupVersionKind,
		ProviderGVK: mysqlv1.ProviderGroupVersionKind,
		Terraform: &registry.TerraformKind{
			Modules:         tfmodules.FS,
			ModuleDir:       "mysql/database",
			ResolveProvider: resolveMySQLProvider,
			ObserveInputs:   observeMySQL,
			ConnectionKeys:  databaseConnectionKeys,
			RecoverCreate:   rerunCreate,
			// converge re-runs the idempotent SQL that makes the database match its inputs.
			HarmlessReplacements: []string{"terraform_data.converge"},
		},
		Meets: map[schema.GroupVersionKind]registry.Configurator{MySQLInstanceGVK: configurator(
			func(claim *databasev1.MySQLInstance, class *mysqldbv1.DatabaseClass, db *mysqldbv1.Database) error {
				return fillDatabase("MySQL", claim, claim.Spec.DatabaseParameters, class.Name, &db.Spec.ForProvider.DatabaseName, &db.Spec.ForProvider.RoleName, db.Spec.ForProvider.EngineVersion)
			})},
	}
}

func postgreSQLInstance() registry.ClaimKind {
	return registry.ClaimKind{GVK: PostgreSQLInstanceGVK, ClassGVK: databasev1.GroupVersion.WithKind("PostgreSQLInstanceClass")}
}

func mySQLInstance() registry.ClaimKind {
	return registry.ClaimKind{GVK: MySQLInstanceGVK, ClassGVK: databasev1.GroupVersion.WithKind("MySQLInstanceClass")}
}

// fillDatabase checks that the class can satisfy the claim and derives the database
// and role names from the claim where the class leaves them empty.
func fillDatabase(engine string, claim metav1.Object, want databasev1.DatabaseParameters, class string, database, role *string, offered string) error {
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
