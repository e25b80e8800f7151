package registry

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"terraplane.io/terraplane/internal/resource"
)

// Request is what a Configurator makes a managed resource from.
type Request struct {
	// Claim being provisioned.
	Claim resource.Claim
	// Class is the non-portable class its portable class points at.
	Class resource.NonPortableClass
	// ClusterLabels are the labels of the cluster the claim's first consumer was scheduled
	// to; nil unless the portable class binds on first consumer.
	ClusterLabels map[string]string
}

// Value reads one class-mapped value: a dotted path in the claim (fromFieldPath) or a
// label of the chosen cluster (fromClusterLabel). found is false when there is none.
func (r Request) Value(fromFieldPath, fromClusterLabel string) (v any, found bool, err error) {
	if fromClusterLabel != "" {
		v, found = r.ClusterLabels[fromClusterLabel]
		return v, found, nil
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.Claim)
	if err != nil {
		return nil, false, err
	}
	v, found, err = unstructured.NestedFieldCopy(obj, strings.Split(fromFieldPath, ".")...)
	if err != nil || v == nil {
		return nil, false, nil // a path through a scalar or to null has no value
	}
	return v, found, nil
}
