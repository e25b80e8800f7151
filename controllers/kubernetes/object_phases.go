package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// Apply applies the manifest, copies the remote status into status.atProvider and
// returns the connection details once every one has a value.
func (e *object) Apply(ctx context.Context, mg resource.Managed) (managed.Applied, error) {
	o := mg.(*kubernetesv1.Object)
	obj, err := o.Spec.ForProvider.Manifest.Object()
	if err != nil {
		return managed.Applied{}, resource.UserErrorf("InvalidManifest", "spec.forProvider.manifest: %v", err)
	}
	if err := Apply(ctx, e.cluster, o.UID, obj, e.r.adopt(o)); err != nil {
		return managed.Applied{}, err
	}
	o.Status.AtProvider = nil
	if st, ok := obj.Object["status"]; ok {
		b, err := json.Marshal(st)
		if err != nil {
			return managed.Applied{}, fmt.Errorf("encode remote status: %w", err)
		}
		o.Status.AtProvider = &apiextensionsv1.JSON{Raw: b}
	}
	details, err := connectionDetails(ctx, e.cluster, o, obj)
	return managed.Applied{ConnectionDetails: details}, err
}

// connectionDetails reads every connection key from the remote object or the Secret it
// names; a value that is not there yet is a wait, not a failure.
func connectionDetails(ctx context.Context, cluster *remote.Cluster, o *kubernetesv1.Object, obj *unstructured.Unstructured) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, d := range o.Spec.ForProvider.ConnectionDetails {
		if d.FieldPath != "" {
			v, ok := field(obj, d.FieldPath)
			if !ok {
				return nil, resource.Waitf("WaitingForConnectionDetails", "%s %s has no %s yet", obj.GetKind(), Describe(obj), d.FieldPath)
			}
			out[d.Key] = []byte(v)
			continue
		}
		name, ok := field(obj, d.FromSecret.NameFieldPath)
		if !ok {
			return nil, resource.Waitf("WaitingForConnectionDetails", "%s %s has no %s yet", obj.GetKind(), Describe(obj), d.FromSecret.NameFieldPath)
		}
		s := &corev1.Secret{}
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}
		if err := cluster.Client.Get(ctx, key, s); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, resource.Waitf("WaitingForConnectionDetails", "Secret %s named by %s does not exist yet in cluster %s", key, d.FromSecret.NameFieldPath, cluster.Host)
			}
			return nil, fmt.Errorf("get remote secret %s: %w", key, remote.Classify(cluster.Host, err))
		}
		v, ok := s.Data[d.FromSecret.Key]
		if !ok {
			return nil, resource.Waitf("WaitingForConnectionDetails", "Secret %s has no key %s yet", key, d.FromSecret.Key)
		}
		out[d.Key] = v
	}
	return out, nil
}

// field reads a dotted path of the object as a string.
func field(obj *unstructured.Unstructured, path string) (string, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
	if err != nil || !found || v == nil {
		return "", false
	}
	if s, ok := v.(string); ok {
		return s, s != ""
	}
	return fmt.Sprint(v), true
}
