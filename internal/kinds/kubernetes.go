package kinds

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// ObjectGVK is the Kubernetes-native managed kind: an object in a target cluster.
var ObjectGVK = kubernetesv1.GroupVersion.WithKind("Object")

// ClusterGVK is the managed kind of an existing Kubernetes cluster (static only).
var ClusterGVK = kubernetesv1.GroupVersion.WithKind("Cluster")

// object registers Object, made from ObjectClasses; controllers/kubernetes serves it.
func object() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:         ObjectGVK,
		ClassGVK:    kubernetesv1.GroupVersion.WithKind("ObjectClass"),
		ProviderGVK: kubernetesv1.GroupVersion.WithKind("ProviderConfig"),
	}
}

// cluster registers Cluster, which KubernetesCluster claims bind statically.
func cluster() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:         ClusterGVK,
		ProviderGVK: kubernetesv1.GroupVersion.WithKind("ProviderConfig"),
	}
}

// configureObject makes an Object for any claim: the class's manifest and connection
// details, the manifest's name taken as a prefix and made unique with the claim's UID,
// and the class's patches applied from the claim and the chosen cluster's labels.
func configureObject(req registry.Request, mg resource.Managed) error {
	class, ok1 := req.Class.(*kubernetesv1.ObjectClass)
	o, ok2 := mg.(*kubernetesv1.Object)
	if !ok1 || !ok2 {
		return fmt.Errorf("configure Object: unexpected types %T, %T", req.Class, mg)
	}
	params := class.SpecTemplate.ForProvider.DeepCopy()
	manifest, err := params.Manifest.Object()
	if err != nil {
		return resource.UserErrorf("InvalidClass", "ObjectClass %s/%s specTemplate.forProvider.manifest: %v", class.Namespace, class.Name, err)
	}
	manifest.SetName(manifest.GetName() + "-" + shortUID(req.Claim.GetUID()))
	if err := patchManifest(req, class.SpecTemplate.Patches, manifest); err != nil {
		return resource.UserErrorf("InvalidClass", "ObjectClass %s/%s: %v", class.Namespace, class.Name, err)
	}
	if params.Manifest, err = workloadv1.TemplateFrom(manifest); err != nil {
		return resource.UserErrorf("InvalidClass", "ObjectClass %s/%s: %v", class.Namespace, class.Name, err)
	}
	o.Spec.ForProvider = *params
	return nil
}

// patchManifest applies each patch whose source has a value.
func patchManifest(req registry.Request, patches []kubernetesv1.ObjectPatch, manifest *unstructured.Unstructured) error {
	for _, p := range patches {
		v, found, err := req.Value(p.FromFieldPath, p.FromClusterLabel)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if p.Format != "" {
			v = fmt.Sprintf(p.Format, v)
		}
		v = runtime.DeepCopyJSONValue(jsonValue(v))
		if err := unstructured.SetNestedField(manifest.Object, v, strings.Split(p.ToFieldPath, ".")...); err != nil {
			return fmt.Errorf("patch %s: %w", p.ToFieldPath, err)
		}
	}
	return nil
}

// shortUID is the first eight hexadecimal digits of a UID.
func shortUID(uid types.UID) string {
	s := strings.ReplaceAll(string(uid), "-", "")
	if len(s) > 8 {
		s = s[:8]
	}
	return s
}

// jsonValue widens Go integers to the int64 that unstructured objects hold.
func jsonValue(v any) any {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	}
	return v
}
