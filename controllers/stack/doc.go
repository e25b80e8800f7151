// Package stack is the native stack manager. The install reconciler turns a StackInstall
// or ClusterStackInstall into an installed stack: it resolves the package (by reference,
// or by a CRD through the registry's stack index), pulls and checks it in-process,
// installs missing dependencies first, then applies the annotated CRDs, the Stack record
// and any Terraform modules and classes; deleting the install uninstalls it while keeping
// CRDs that still hold custom resources. The Stack reconciler gives a Stack (installed
// or written by a user) its ServiceAccount, RBAC by permissionScope and controller Deployment.
package stack
