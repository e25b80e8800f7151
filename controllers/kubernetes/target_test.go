package kubernetes

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
)

// kubernetesCluster is claim namespace/name with connection Secret name-conn, Bound and
// Ready when ready.
func kubernetesCluster(namespace, name string, ready bool) *computev1.KubernetesCluster {
	return claimIn(namespace, name, ready, ready)
}

func claimIn(namespace, name string, bound, ready bool) *computev1.KubernetesCluster {
	c := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name + "-conn"}
	if bound {
		c.Status.BindingPhase = common.BindingPhaseBound
	}
	if ready {
		c.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue}}
	}
	return c
}

// TestCredentialsSecret: a reference resolves to its credentials Secret only where its
// target consents to the referrer's namespace.
func TestCredentialsSecret(t *testing.T) {
	shared := providerConfig()
	shared.Namespace, shared.Name = "platform", "shared"
	shared.Spec.AllowedNamespaces = &common.AllowedNamespaces{Names: []string{ns}}
	private := providerConfig()
	private.Namespace, private.Name = "platform", "private"
	noRef := kubernetesCluster(ns, "noref", true)
	noRef.Spec.WriteConnectionSecretToRef = nil
	local := fake.NewClientBuilder().WithScheme(localScheme()).WithObjects(providerConfig(), shared, private,
		kubernetesCluster(ns, "ready", true), kubernetesCluster(ns, "pending", false),
		claimIn(ns, "unbound", false, true), claimIn(ns, "unready", true, false), kubernetesCluster("platform", "ready", true), noRef).Build()
	targets := &Targets{Local: local}
	pcRef := func(namespace, name string) workloadv1.ClusterReference {
		return workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Namespace: namespace, Name: name}
	}
	claimRef := func(namespace, name string) workloadv1.ClusterReference {
		return workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Namespace: namespace, Name: name}
	}
	cases := map[string]struct {
		ref    workloadv1.ClusterReference
		want   types.NamespacedName
		reason string
	}{
		"a ProviderConfig of the namespace":          {ref: pcRef("", pcName), want: types.NamespacedName{Namespace: ns, Name: credName}},
		"a ProviderConfig that allows the namespace": {ref: pcRef("platform", "shared"), want: types.NamespacedName{Namespace: "platform", Name: credName}},
		"a ProviderConfig that does not":             {ref: pcRef("platform", "private"), reason: "ReferenceNotAllowed"},
		"no such ProviderConfig":                     {ref: pcRef("", "none"), reason: "ClusterNotFound"},
		"a Bound, Ready claim of the namespace":      {ref: claimRef("", "ready"), want: types.NamespacedName{Namespace: ns, Name: "ready-conn"}},
		"a claim of the namespace, named with it":    {ref: claimRef(ns, "ready"), want: types.NamespacedName{Namespace: ns, Name: "ready-conn"}},
		"a claim of another namespace":               {ref: claimRef("platform", "ready"), reason: "ReferenceNotAllowed"},
		"a claim neither Bound nor Ready yet":        {ref: claimRef("", "pending"), reason: "ClusterNotReady"},
		"a claim Ready, not Bound":                   {ref: claimRef("", "unbound"), reason: "ClusterNotReady"},
		"a claim Bound, not Ready":                   {ref: claimRef("", "unready"), reason: "ClusterNotReady"},
		"a claim that writes no connection Secret":   {ref: claimRef("", "noref"), reason: "NoConnectionSecret"},
		"no such claim":                              {ref: claimRef("", "none"), reason: "ClusterNotFound"},
		"neither a claim nor a ProviderConfig":       {ref: workloadv1.ClusterReference{Kind: "Cluster", Name: "x"}, reason: "UnknownClusterKind"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := targets.CredentialsSecret(context.Background(), ns, "spec.targetRef", tc.ref)
			if tc.reason != "" {
				got = types.NamespacedName{}
			}
			if diff := cmp.Diff([]any{tc.want, tc.reason}, []any{got, reason(err)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTargetsCluster: a claim whose connection Secret is not written yet is waited for;
// a ProviderConfig whose Secret is missing is an error to fix.
func TestTargetsCluster(t *testing.T) {
	local := fake.NewClientBuilder().WithScheme(localScheme()).WithObjects(providerConfig(), kubernetesCluster(ns, "ready", true)).Build()
	target := targetCluster()
	cases := map[string]struct {
		clusters fakeClusters
		ref      workloadv1.ClusterReference
		reason   string
	}{
		"a ProviderConfig's cluster": {clusters: fakeClusters{{Namespace: ns, Name: credName}: target},
			ref: workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: pcName}},
		"a claim's cluster": {clusters: fakeClusters{{Namespace: ns, Name: "ready-conn"}: target},
			ref: workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "ready"}},
		"a claim's credentials not written yet": {ref: workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "ready"}, reason: "WaitingForCredentials"},
		"a ProviderConfig's credentials missing": {ref: workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: pcName},
			reason: "CredentialsNotFound"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := (&Targets{Local: local, Cache: tc.clusters}).Cluster(context.Background(), ns, "spec.targetRef", tc.ref)
			if reason(err) != tc.reason || (err == nil && got != target) {
				t.Errorf("Cluster = %v, %v; want reason %q", got, err, tc.reason)
			}
		})
	}
}

func TestProviderConfigSecret(t *testing.T) {
	for name, tc := range map[string]struct {
		namespace string
		reason    string
	}{"none named": {"", ""}, "its own named": {ns, ""}, "another named": {"kube-system", "ReferenceNotAllowed"}} {
		pc := providerConfig()
		pc.Spec.CredentialsSecretRef.Namespace = tc.namespace
		key, err := ProviderConfigSecret(pc)
		if reason(err) != tc.reason || key != (types.NamespacedName{Namespace: ns, Name: credName}) {
			t.Errorf("%s: ProviderConfigSecret = %v, %v; want %s/%s, reason %q", name, key, err, ns, credName, tc.reason)
		}
	}
}

// TestProviderConfigsUsing: a Secret names the ProviderConfigs that read it, not those
// that name a Secret of its name elsewhere.
func TestProviderConfigsUsing(t *testing.T) {
	foreign := providerConfig()
	foreign.Name, foreign.Spec.CredentialsSecretRef.Namespace = "foreign", "kube-system"
	other := providerConfig()
	other.Namespace = "team-b"
	local := fake.NewClientBuilder().WithScheme(localScheme()).WithObjects(providerConfig(), foreign, other).Build()
	var got []string
	for _, pc := range providerConfigsUsing(context.Background(), local, credentials("")) {
		got = append(got, pc.Namespace+"/"+pc.Name)
	}
	if diff := cmp.Diff([]string{ns + "/" + pcName}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
