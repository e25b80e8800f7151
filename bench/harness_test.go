package main

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestServedAtAlphaOnly: -one-version keeps v1alpha1 alone, served and stored.
func TestServedAtAlphaOnly(t *testing.T) {
	c := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
		{Name: "v1alpha1", Served: true}, {Name: "v1beta1", Served: true, Storage: true}}}}
	servedAtAlphaOnly(c)
	if len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Name != "v1alpha1" || !c.Spec.Versions[0].Served || !c.Spec.Versions[0].Storage {
		t.Errorf("versions %+v, want v1alpha1 alone, served and stored", c.Spec.Versions)
	}
}
