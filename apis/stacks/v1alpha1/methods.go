package v1alpha1

// Installer is implemented by StackInstall and ClusterStackInstall, so one reconciler serves both.
// +kubebuilder:object:generate=false
type Installer interface {
	// GetInstallSpec returns the shared spec.
	GetInstallSpec() StackInstallSpec
	// GetInstallStatus returns the shared status.
	GetInstallStatus() *StackInstallStatus
	// StackNamespace is where the Stack record and its controller live.
	StackNamespace() string
	// OwnerKey identifies the install in owner annotations, e.g. StackInstall/ns/name.
	OwnerKey() string
	// AllowsClusterScope reports whether the install may grant cluster-wide permissions.
	AllowsClusterScope() bool
	// AllowsTerraform reports whether the install may ship terraform.terraplane.io kinds.
	AllowsTerraform() bool
}

// GetInstallSpec returns the spec.
func (s *StackInstall) GetInstallSpec() StackInstallSpec { return s.Spec }

// GetInstallStatus returns the status.
func (s *StackInstall) GetInstallStatus() *StackInstallStatus { return &s.Status }

// StackNamespace is the install's namespace.
func (s *StackInstall) StackNamespace() string { return s.Namespace }

// OwnerKey is StackInstall/NAMESPACE/NAME.
func (s *StackInstall) OwnerKey() string { return "StackInstall/" + s.Namespace + "/" + s.Name }

// AllowsClusterScope is false: a namespaced install never grants cluster-wide permissions.
func (s *StackInstall) AllowsClusterScope() bool { return false }

// AllowsTerraform is false: a namespaced install never ships code that runs for claims.
func (s *StackInstall) AllowsTerraform() bool { return false }

// GetInstallSpec returns the spec.
func (s *ClusterStackInstall) GetInstallSpec() StackInstallSpec { return s.Spec.StackInstallSpec }

// GetInstallStatus returns the status.
func (s *ClusterStackInstall) GetInstallStatus() *StackInstallStatus { return &s.Status }

// StackNamespace is spec.targetNamespace, terraplane-system when unset.
func (s *ClusterStackInstall) StackNamespace() string {
	if s.Spec.TargetNamespace == "" {
		return "terraplane-system"
	}
	return s.Spec.TargetNamespace
}

// OwnerKey is ClusterStackInstall/NAME.
func (s *ClusterStackInstall) OwnerKey() string { return "ClusterStackInstall/" + s.Name }

// AllowsClusterScope is true.
func (s *ClusterStackInstall) AllowsClusterScope() bool { return true }

// AllowsTerraform is spec.allowTerraform: an admin's explicit consent.
func (s *ClusterStackInstall) AllowsTerraform() bool { return s.Spec.AllowTerraform }
