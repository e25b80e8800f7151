package claimdefinition

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/claimcrd"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

const (
	defName   = "networks.platform.example.org"
	claimCRD  = "networks.platform.example.org"
	classCRD  = "networkclasses.platform.example.org"
	userRetry = 30 * time.Second
)

var (
	networkGVK = schema.GroupVersionKind{Group: "platform.example.org", Version: claimcrd.Version, Kind: "Network"}
	classGVK   = schema.GroupVersionKind{Group: "platform.example.org", Version: claimcrd.Version, Kind: "NetworkClass"}
)

// fakeServer records the claim kinds it is asked to serve.
type fakeServer struct {
	served []string
	err    error
}

func (f *fakeServer) Serve(k *registry.ClaimKind) error {
	if f.err != nil {
		return f.err
	}
	f.served = append(f.served, k.GVK.Kind+"/"+k.ClassGVK.Kind)
	return nil
}

// harness is a ClaimDefinition reconciler over a fake API server.
type harness struct {
	t      *testing.T
	c      client.Client
	r      *Reconciler
	server *fakeServer
	reg    *registry.Registry
}

func newHarness(t *testing.T, objs ...client.Object) *harness {
	t.Helper()
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	_ = apiextv1.AddToScheme(s)
	_ = terraformv1.AddToScheme(s)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&apiextv1.ClaimDefinition{}, &apiextensionsv1.CustomResourceDefinition{}).Build()
	h := &harness{t: t, c: c, server: &fakeServer{}, reg: registry.New(s)}
	h.r = &Reconciler{client: c, loader: &modsource.Loader{}, reg: h.reg, server: h.server,
		opts: Options{UserErrorRetry: userRetry, DefaultNamespace: "terraplane-system"}, events: resource.RecorderFor(events.NewFakeRecorder(100))}
	return h
}

// definition is ClaimDefinition Network with parameters schema (JSON), or from module
// class when schema is empty.
func definition(schema, class string) *apiextv1.ClaimDefinition {
	d := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: defName, UID: "def-uid", Generation: 3},
		Spec: apiextv1.ClaimDefinitionSpec{Group: "platform.example.org", Names: apiextv1.ClaimDefinitionNames{Kind: "Network", Plural: "networks"}}}
	switch {
	case schema != "":
		d.Spec.Schema = &apiextensionsv1.JSON{Raw: []byte(schema)}
	case class != "":
		d.Spec.FromModule = &apiextv1.FromModule{ModuleClassRef: apiextv1.ModuleClassReference{Name: class}}
	}
	return d
}

// reconcile runs one reconcile and returns its result and error.
func (h *harness) reconcile() (ctrl.Result, error) {
	h.t.Helper()
	return h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: defName}})
}

// def reads the definition back; nil when it is gone.
func (h *harness) def() *apiextv1.ClaimDefinition {
	d := &apiextv1.ClaimDefinition{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Name: defName}, d); err != nil {
		return nil
	}
	return d
}

// crd reads a CRD; nil when it does not exist.
func (h *harness) crd(name string) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
		return nil
	}
	return c
}

// establish marks both CRDs Established, as the API server does once it serves them.
func (h *harness) establish() {
	h.t.Helper()
	for _, name := range []string{claimCRD, classCRD} {
		c := h.crd(name)
		if c == nil {
			h.t.Fatalf("CRD %s was not applied", name)
		}
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		if err := h.c.Status().Update(context.Background(), c); err != nil {
			h.t.Fatal(err)
		}
	}
}

// conditions names the definition's Synced and Ready conditions as "status/reason".
func conditions(d *apiextv1.ClaimDefinition) [2]string {
	var out [2]string
	for i, typ := range []string{common.TypeSynced, common.TypeReady} {
		if c := meta.FindStatusCondition(d.Status.Conditions, typ); c != nil {
			out[i] = string(c.Status) + "/" + c.Reason
		}
	}
	return out
}

// claim is a Network claim in team-a with parameters.
func claim(name string, params map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"parameters": params}}}
	u.SetGroupVersionKind(networkGVK)
	u.SetNamespace("team-a")
	u.SetName(name)
	return u
}

// foreignCRD is a CRD of the claim kind's name that no definition owns.
func foreignCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: claimCRD}}
}

// moduleClass is ModuleClass terraplane-system/vpc with its module in a ConfigMap.
func moduleClass(mainTF string) []client.Object {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "terraplane-system", Name: "vpc-module", UID: "cm"},
		Data: map[string]string{"main.tf": mainTF}}
	mc := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "terraplane-system", Name: "vpc"}}
	mc.SpecTemplate.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "vpc-module"}
	return []client.Object{cm, mc}
}

var errServe = errors.New("manager stopped")
