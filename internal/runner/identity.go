package runner

import (
	"context"
	"fmt"
	"maps"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RunnerClusterRole is what a pool's ServiceAccount is granted in the namespaces it
// serves: the Secrets and Leases terraform's kubernetes backend keeps state and locks in.
const RunnerClusterRole = "terraplane-runner"

// runnerRules are RunnerClusterRole's rules.
var runnerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
}

// ServiceAccountName is the ServiceAccount of pool, in the namespace it serves.
func ServiceAccountName(pool PoolRef) string { return "terraplane-runner-" + pool.Name }

// tokenLifetime is how long a pool's token is valid; it is minted again well before.
const tokenLifetime = 12 * time.Hour

// Identities gives pools their identity: a ServiceAccount in the namespace each serves,
// bound there to RunnerClusterRole, and tokens minted for it by the TokenRequest API.
type Identities struct {
	// Client creates the ServiceAccounts and bindings.
	Client client.Client
	// Tokens mints tokens (the TokenRequest API).
	Tokens kubernetes.Interface
	// EnsureRole creates RunnerClusterRole when it is missing (`terraplane dev` and the
	// tests); a controller without RBAC rights is refused and goes on, as in a cluster,
	// where the chart ships the role.
	EnsureRole bool
}

// Ensure makes pool's ServiceAccount and its binding, and mints a token for it.
func (id *Identities) Ensure(ctx context.Context, pool PoolRef) (string, error) {
	if err := id.Account(ctx, pool); err != nil {
		return "", err
	}
	return id.token(ctx, pool)
}

// Account makes pool's ServiceAccount and its binding to RunnerClusterRole in the pool's
// namespace (and the role, with EnsureRole).
func (id *Identities) Account(ctx context.Context, pool PoolRef) error {
	if id.EnsureRole {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: RunnerClusterRole}, Rules: runnerRules}
		if err := id.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
			return fmt.Errorf("runner role: %w", err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: pool.Namespace, Name: ServiceAccountName(pool),
		Labels: poolLabels(pool)}}
	if err := id.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("runner service account: %w", err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: pool.Namespace, Name: ServiceAccountName(pool), Labels: sa.Labels},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RunnerClusterRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: pool.Namespace, Name: sa.Name}}}
	if err := id.Client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("runner role binding: %w", err)
	}
	return nil
}

// token mints a token for pool's ServiceAccount.
func (id *Identities) token(ctx context.Context, pool PoolRef) (string, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(tokenLifetime / time.Second))}}
	tr, err := id.Tokens.CoreV1().ServiceAccounts(pool.Namespace).CreateToken(ctx, ServiceAccountName(pool), req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for runner pool %s: %w", pool, err)
	}
	return tr.Status.Token, nil
}

// runnerLabels mark what the controller makes for any pool.
var runnerLabels = map[string]string{"app.kubernetes.io/managed-by": "terraplane", "app.kubernetes.io/name": "terraplane-runner"}

// poolLabels mark what the controller makes for pool.
func poolLabels(pool PoolRef) map[string]string {
	labels := maps.Clone(runnerLabels)
	labels[PoolLabel] = pool.Name
	return labels
}

// PoolLabel names the pool an object the controller made for a runner belongs to.
const PoolLabel = "terraplane.io/runner-pool"
