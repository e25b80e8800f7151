package stack

// The stack manager's permissions beyond the controller's own (which include CRDs, for
// ClaimDefinitions): it installs a stack's controller's ServiceAccount, RBAC and
// Deployment, and checks that no custom resource is left before it removes a CRD.
// `make generate` turns these markers into config/rbac/stacks/role.yaml (ClusterRole
// terraplane-stacks); the Helm chart grants them only with stackManager.enabled.
//
// +kubebuilder:rbac:groups=stacks.terraplane.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=stacks.terraplane.io,resources=*/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings;clusterroles;clusterrolebindings,verbs=get;list;watch;create;update;patch;delete;escalate;bind
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps;serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=*,resources=*,verbs=list
