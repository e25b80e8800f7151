package trace

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/kref"
	"terraplane.io/terraplane/internal/registry"
)

// Role is the part a kind plays in a trace.
type Role int

// Roles.
const (
	// RoleOther is a kind the tracer shows but does not follow.
	RoleOther Role = iota
	// RoleClaim is a claim kind, compiled in or made by a ClaimDefinition.
	RoleClaim
	// RoleClass is a portable or non-portable class.
	RoleClass
	// RoleManaged is a managed resource kind.
	RoleManaged
	// RoleProvider is a Provider or ProviderConfig.
	RoleProvider
	// RoleApplication is a KubernetesApplication.
	RoleApplication
	// RoleApplicationResource is a KubernetesApplicationResource.
	RoleApplicationResource
	// RolePool is a ResourcePool.
	RolePool
)

// Kinds is what the tracer needs to know about kinds.
type Kinds interface {
	// Role says what part a kind plays.
	Role(gvk schema.GroupVersionKind) Role
	// ClassOf is the portable class kind of a claim kind.
	ClassOf(ctx context.Context, claim schema.GroupVersionKind) schema.GroupVersionKind
	// ProviderOf is the kind a managed kind's providerRef (and providerConfigRefs) names.
	ProviderOf(managed schema.GroupVersionKind) schema.GroupVersionKind
	// Qualify says whether a kind's name is shared by several groups, so that a table
	// names it with its group.
	Qualify(gvk schema.GroupVersionKind) bool
}

// KindInfo knows kinds from the registry (compiled-in kinds), the API server's
// discovery (categories) and ClaimDefinitions (defined claim kinds).
type KindInfo struct {
	// Registry holds the compiled-in kinds.
	Registry *registry.Registry
	// Reader reads ClaimDefinitions; a caller who may not read them gets the default
	// class kind, <Kind>Class.
	Reader client.Reader
	// Categories are a kind's categories, from discovery.
	Categories func(schema.GroupVersionKind) []string
	// GroupKinds lists the kinds a group version serves, from discovery.
	GroupKinds func(schema.GroupVersion) []schema.GroupVersionKind
}

// Role is the kind's role by its categories.
func (k *KindInfo) Role(gvk schema.GroupVersionKind) Role {
	switch gvk.GroupKind() {
	case workloadv1.GroupVersion.WithKind("KubernetesApplication").GroupKind():
		return RoleApplication
	case workloadv1.GroupVersion.WithKind("KubernetesApplicationResource").GroupKind():
		return RoleApplicationResource
	case scalingv1.ResourcePoolGroupVersionKind.GroupKind():
		return RolePool
	}
	cats := k.Categories(gvk)
	for _, c := range []struct {
		category string
		role     Role
	}{{kref.CategoryClaim, RoleClaim}, {kref.CategoryManaged, RoleManaged}, {kref.CategoryProvider, RoleProvider}, {kref.CategoryClass, RoleClass}} {
		if slices.Contains(cats, c.category) {
			return c.role
		}
	}
	return RoleOther
}

// ClassOf is the class kind the registry knows, else the defining ClaimDefinition's,
// else (for a caller who may not read ClaimDefinitions) the one class kind the claim's
// group serves, else <Kind>Class in the claim's group.
func (k *KindInfo) ClassOf(ctx context.Context, claim schema.GroupVersionKind) schema.GroupVersionKind {
	if ck, ok := k.Registry.Claim(claim); ok {
		return ck.ClassGVK
	}
	list := &apiextv1.ClaimDefinitionList{}
	if k.Reader != nil && k.Reader.List(ctx, list) == nil {
		for _, d := range list.Items {
			if d.Spec.Group == claim.Group && d.Spec.Names.Kind == claim.Kind {
				return claim.GroupVersion().WithKind(d.ClassKindName())
			}
		}
	}
	conventional := claim.GroupVersion().WithKind(claim.Kind + "Class")
	var classes []schema.GroupVersionKind
	if k.GroupKinds != nil {
		for _, gvk := range k.GroupKinds(claim.GroupVersion()) {
			if slices.Contains(k.Categories(gvk), kref.CategoryClass) {
				classes = append(classes, gvk)
			}
		}
	}
	if len(classes) == 1 && !slices.Contains(classes, conventional) {
		return classes[0]
	}
	return conventional
}

// ProviderOf is the Provider kind the registry knows, else Provider in the provider's
// group (storage.aws.terraplane.io → aws.terraplane.io).
func (k *KindInfo) ProviderOf(managed schema.GroupVersionKind) schema.GroupVersionKind {
	if mk, ok := k.Registry.Managed(managed); ok {
		return mk.ProviderGVK
	}
	_, group, _ := strings.Cut(managed.Group, ".")
	return schema.GroupVersionKind{Group: group, Version: managed.Version, Kind: "Provider"}
}

// RunsTerraform says whether a managed kind runs terraform: any the registry serves
// through the Terraform Connector, not the native kinds (Object, Cluster).
func (k *KindInfo) RunsTerraform(managed schema.GroupVersionKind) bool {
	mk, ok := k.Registry.Managed(managed)
	return ok && mk.Terraform != nil
}

// Qualify says whether more than one group of the registry's scheme has the kind.
func (k *KindInfo) Qualify(gvk schema.GroupVersionKind) bool {
	groups := map[string]bool{}
	for known := range k.Registry.Scheme().AllKnownTypes() {
		if known.Kind == gvk.Kind && strings.HasSuffix(known.Group, "terraplane.io") {
			groups[known.Group] = true
		}
	}
	return len(groups) > 1
}
