package kubernetes

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// CheckProviderConfig refuses, with a ReferenceNotAllowed user error, a use of pc from
// namespace from (by the reference field names) that pc's spec.allowedNamespaces does
// not consent to. A use from pc's own namespace is always allowed.
func CheckProviderConfig(ctx context.Context, c client.Reader, pc *kubernetesv1.ProviderConfig, field, from string) error {
	return resource.CheckReference(ctx, c, pc.Spec.AllowedNamespaces, field,
		"ProviderConfig "+pc.Namespace+"/"+pc.Name, pc.Namespace, from)
}

// CheckClaim refuses a use of KubernetesCluster claim key from namespace from: a claim
// has no consent field, so its credentials are used only from its own namespace.
func CheckClaim(key types.NamespacedName, field, from string) error {
	if key.Namespace == from {
		return nil
	}
	return resource.UserErrorf(common.ReasonReferenceNotAllowed,
		"%s names KubernetesCluster %s, in another namespace than %s: a KubernetesCluster claim is used only from its own namespace; claim a cluster in %s, or use a ProviderConfig that allows namespace %s",
		field, key, from, from, from)
}

// ProviderConfigSecret names the credentials Secret of a ProviderConfig, which is always
// in the ProviderConfig's own namespace: a spec.credentialsSecretRef.namespace naming
// another is a ReferenceNotAllowed user error (a Secret cannot consent to being used
// from elsewhere).
func ProviderConfigSecret(pc *kubernetesv1.ProviderConfig) (types.NamespacedName, error) {
	ref := pc.Spec.CredentialsSecretRef
	key := types.NamespacedName{Namespace: pc.Namespace, Name: ref.Name}
	if ref.Namespace != "" && ref.Namespace != pc.Namespace {
		return key, resource.UserErrorf(common.ReasonReferenceNotAllowed,
			"spec.credentialsSecretRef of ProviderConfig %s/%s names a Secret in namespace %s: the credentials Secret must be in the ProviderConfig's own namespace; remove spec.credentialsSecretRef.namespace (deprecated) and put the Secret in %s",
			pc.Namespace, pc.Name, ref.Namespace, pc.Namespace)
	}
	return key, nil
}
