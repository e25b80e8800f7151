package stack

// The stack manager's permissions: it alone holds CRDs, RBAC and Deployments. It installs
// stacks (their CRDs, Stack records, modules and classes, their controller's
// ServiceAccount, RBAC and Deployment), checks that no custom resource is left before it
// removes a CRD, reads pull Secrets, and writes the CRDs and ClusterRoles of
// ClaimDefinitions (claimdefinition.SetupDefiner). `make generate` turns these markers
// into config/rbac/stacks/role.yaml (ClusterRole terraplane-stacks); the Helm chart grants
// them, with terraplane-admin for the classes it installs, to the stack manager's own
// ServiceAccount, only with stackManager.enabled.
//
// +kubebuilder:rbac:groups=stacks.terraplane.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=stacks.terraplane.io,resources=*/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings;clusterroles;clusterrolebindings,verbs=get;list;watch;create;update;patch;delete;escalate;bind
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps;serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=*,resources=*,verbs=list
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apiextensions.terraplane.io,resources=claimdefinitions,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apiextensions.terraplane.io,resources=claimdefinitions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
