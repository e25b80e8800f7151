package framework

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/kinds"
)

// Tenant is a user with rights in one namespace only, as an app team is given: every
// verb on every resource of its namespace, Secrets included, through a namespaced Role,
// and nothing outside it.
type Tenant struct {
	// User is the user name the API server sees.
	User string
	// Namespace is the one namespace the tenant has rights in.
	Namespace string
	// Config impersonates the tenant.
	Config *rest.Config
	// Client talks to the API server as the tenant (no cache).
	Client client.Client
}

// Tenant creates namespace ns (if needed) with a Role granting user every verb there on
// every resource, and returns a client that impersonates user.
func (e *Env) Tenant(ctx context.Context, user, ns string) (*Tenant, error) {
	if err := e.Namespace(ctx, ns); err != nil {
		return nil, err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-" + user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-" + user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	for _, o := range []client.Object{role, binding} {
		if err := e.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("tenant %s: %w", user, err)
		}
	}
	cfg := rest.CopyConfig(e.ControlPlane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: kinds.NewScheme()})
	if err != nil {
		return nil, err
	}
	return &Tenant{User: user, Namespace: ns, Config: cfg, Client: c}, nil
}
