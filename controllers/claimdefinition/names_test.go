package claimdefinition

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/claimcrd"
	"terraplane.io/terraplane/internal/resource"
)

// fakeDiscovery serves Terraplane's own Network kind in another group.
type fakeDiscovery struct{}

func (fakeDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return nil, []*metav1.APIResourceList{{GroupVersion: "network.terraplane.io/v1alpha1",
		APIResources: []metav1.APIResource{{Name: "networks", SingularName: "network", Kind: "Network"}}}}, nil
}

// TestNameServedByAnotherGroup: a kind whose names another group serves is served all the
// same (a definition that worked goes on working); Ready says which names and how to
// reach the kind, and one event warns, however often the definition is reconciled.
func TestNameServedByAnotherGroup(t *testing.T) {
	h := newHarness(t, definition(`{"type":"object"}`, ""))
	rec := events.NewFakeRecorder(10)
	h.r.events, h.r.opts.Discovery = resource.RecorderFor(rec), fakeDiscovery{}
	for range 3 {
		if _, err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		h.establish()
	}
	ready := meta.FindStatusCondition(h.def().Status.Conditions, common.TypeReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || !strings.Contains(ready.Message, "networks.network.terraplane.io takes the same kind Network and plural networks") ||
		!strings.Contains(ready.Message, "kubectl get networks.platform.example.org") {
		t.Errorf("Ready = %+v", ready)
	}
	close(rec.Events)
	var warned []string
	for e := range rec.Events {
		if strings.HasPrefix(e, "Warning "+apiextv1.ReasonNameConflict) {
			warned = append(warned, e)
		}
	}
	if len(warned) != 1 {
		t.Errorf("NameConflict events: %q, want one", warned)
	}
}

// TestSchemaFromTheClass: the variables the ModuleClass fixes in forProvider are no
// parameters (the class's values win), and parameterSchemas replace a generated schema.
func TestSchemaFromTheClass(t *testing.T) {
	objs := moduleClass(`variable "name" { type = string }
variable "public" {
  type    = bool
  default = true
}
variable "rules" {
  type    = any
  default = []
}`)
	objs[1].(*terraformv1.ModuleClass).SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"public": false}`)}
	def := definition("", "vpc")
	def.Spec.FromModule.ParameterSchemas = map[string]apiextensionsv1.JSON{"rules": {Raw: []byte(`{"type":"array","items":{"type":"object","properties":{"days":{"type":"integer"}}}}`)}}
	h := newHarness(t, append(objs, def)...)
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	params, ok := claimcrd.Parameters(h.crd(claimCRD))
	if !ok {
		t.Fatalf("no claim CRD: %v", h.def().Status.Conditions)
	}
	if diff := cmp.Diff([]string{"name", "rules"}, slices.Sorted(maps.Keys(params.Properties))); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	if got := params.Properties["rules"].Items.Schema.Properties["days"].Type; got != "integer" {
		t.Errorf("rules[].days is %q, want the given integer", got)
	}
}
