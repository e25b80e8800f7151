package app

// The manager's permissions; `make generate` turns these markers into config/rbac/role.yaml.
// They hold no Secrets (the controller is granted those per namespace it serves:
// config/rbac/namespace), no CRDs and no RBAC: those are the stack manager's
// (controllers/stack/rbac.go), which also writes ClaimDefinitions' CRDs.
//
// +kubebuilder:rbac:groups=storage.terraplane.io;database.terraplane.io;cache.terraplane.io;compute.terraplane.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=storage.terraplane.io;database.terraplane.io;cache.terraplane.io;compute.terraplane.io,resources=*/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=aws.terraplane.io;storage.aws.terraplane.io;postgresql.terraplane.io;database.postgresql.terraplane.io;mysql.terraplane.io;database.mysql.terraplane.io;terraform.terraplane.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=aws.terraplane.io;storage.aws.terraplane.io;postgresql.terraplane.io;database.postgresql.terraplane.io;mysql.terraplane.io;database.mysql.terraplane.io;terraform.terraplane.io,resources=*/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=database.aws.terraplane.io;cache.aws.terraplane.io;compute.aws.terraplane.io;gcp.terraplane.io;database.gcp.terraplane.io;storage.gcp.terraplane.io;cache.gcp.terraplane.io;compute.gcp.terraplane.io;azure.terraplane.io;database.azure.terraplane.io;storage.azure.terraplane.io;cache.azure.terraplane.io;compute.azure.terraplane.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=database.aws.terraplane.io;cache.aws.terraplane.io;compute.aws.terraplane.io;gcp.terraplane.io;database.gcp.terraplane.io;storage.gcp.terraplane.io;cache.gcp.terraplane.io;compute.gcp.terraplane.io;azure.terraplane.io;database.azure.terraplane.io;storage.azure.terraplane.io;cache.azure.terraplane.io;compute.azure.terraplane.io,resources=*/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kubernetes.terraplane.io;workload.terraplane.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kubernetes.terraplane.io;workload.terraplane.io,resources=*/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apiextensions.terraplane.io,resources=claimdefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.terraplane.io,resources=planpolicies;namespacedplanpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.terraplane.io,resources=planpolicies/status;namespacedplanpolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=scaling.terraplane.io,resources=resourcepools,verbs=get;list;watch
// +kubebuilder:rbac:groups=scaling.terraplane.io,resources=resourcepools/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
