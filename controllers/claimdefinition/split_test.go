package claimdefinition

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	"terraplane.io/terraplane/internal/claimcrd"
	"terraplane.io/terraplane/internal/kinds"
)

// TestKindRoles: each of the chart's roles gets the defined kind's claims and classes
// with its own verbs, labelled to aggregate into it; none reaches anything else.
func TestKindRoles(t *testing.T) {
	def := definition(sizeSchema, "")
	roles := KindRoles(def, claimcrd.ClaimCRD(def, apiextensionsv1.JSONSchemaProps{Type: "object"}), claimcrd.ClassCRD(def))
	type role struct {
		Label string
		Rules []string // group/resource:verbs
	}
	got := map[string]role{}
	for _, r := range roles {
		var label string
		for k := range r.Labels {
			if k != claimcrd.DefinitionLabel {
				label = k
			}
		}
		var rules []string
		for _, rule := range r.Rules {
			for _, res := range rule.Resources {
				rules = append(rules, rule.APIGroups[0]+"/"+res+":"+joinVerbs(rule.Verbs))
			}
		}
		got[r.Name] = role{label, rules}
	}
	const read, all = "get,list,watch", "get,list,watch,create,update,patch,delete,deletecollection"
	g := "platform.example.org/"
	want := map[string]role{
		"terraplane:" + defName + ":claimer": {AggregateToClaimer, []string{g + "networks:" + all, g + "networkclasses:" + read}},
		"terraplane:" + defName + ":viewer":  {AggregateToViewer, []string{g + "networks:" + read, g + "networkclasses:" + read}},
		"terraplane:" + defName + ":admin":   {AggregateToAdmin, []string{g + "networks:" + all, g + "networkclasses:" + all}},
		"terraplane:" + defName + ":manager": {AggregateToManager, []string{g + "networks:get,list,watch,create,update,patch,delete", g + "networkclasses:get,list,watch,update,patch",
			g + "networks/status:get,update,patch", g + "networkclasses/status:get,update,patch"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
}

func joinVerbs(v []string) string { return strings.Join(v, ",") }

// TestDefinerOnly: the stack manager's reconciler (no KindServer) applies the CRDs and
// the kind's ClusterRoles, owned by the definition, records Established once the CRDs
// are served, and serves nothing itself.
func TestDefinerOnly(t *testing.T) {
	h := newHarness(t, definition(sizeSchema, ""))
	h.r.server = nil
	established := func() string {
		c := meta.FindStatusCondition(h.def().Status.Conditions, apiextv1.TypeEstablished)
		if c == nil {
			return ""
		}
		return string(c.Status)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := established(); got != "False" {
		t.Errorf("before the CRDs are served: Established %q, want False", got)
	}
	h.establish()
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := established(); got != "True" {
		t.Errorf("once served: Established %q, want True", got)
	}
	if diff := cmp.Diff([2]string{"True/ReconcileSuccess", "True/Served"}, conditions(h.def())); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if len(h.server.served) != 0 {
		t.Errorf("the definer served %v", h.server.served)
	}
	roles := &rbacv1.ClusterRoleList{}
	if err := h.c.List(context.Background(), roles); err != nil {
		t.Fatal(err)
	}
	if len(roles.Items) != 4 {
		t.Fatalf("%d ClusterRoles, want 4", len(roles.Items))
	}
	for _, r := range roles.Items {
		if !metav1IsControlledBy(&r, &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{UID: "def-uid"}}) {
			t.Errorf("ClusterRole %s is not owned by the definition", r.Name)
		}
	}
}

// TestServer: the controller serves a defined kind once its definition is Established,
// and never a kind compiled in (or defined with another class).
func TestServer(t *testing.T) {
	cases := map[string]struct {
		established metav1.ConditionStatus
		taken       bool
		want        []string
	}{
		"established":              {metav1.ConditionTrue, false, []string{"Network/NetworkClass"}},
		"not yet":                  {metav1.ConditionFalse, false, nil},
		"no condition":             {"", false, nil},
		"the kind is served other": {metav1.ConditionTrue, true, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			def := definition(sizeSchema, "")
			if tc.established != "" {
				def.Status.Conditions = []metav1.Condition{{Type: apiextv1.TypeEstablished, Status: tc.established, Reason: "R", LastTransitionTime: metav1.Now()}}
			}
			h := newHarness(t, def)
			if tc.taken {
				h.reg.AddClaim(kinds.DefinedClaim(networkGVK, classGVK.GroupVersion().WithKind("NetworkTier")))
			}
			s := &Server{client: h.c, reg: h.reg, server: h.server}
			if _, err := s.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: defName}}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, h.server.served); diff != "" {
				t.Errorf("served (-want +got):\n%s", diff)
			}
		})
	}
}
