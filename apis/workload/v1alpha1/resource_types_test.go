package v1alpha1

import "testing"

func TestParseClusterReference(t *testing.T) {
	ref := ClusterReference{Kind: ClusterKindClaim, Namespace: "team", Name: "eu"}
	got, err := ParseClusterReference(ref.String())
	if err != nil || got != ref {
		t.Errorf("round trip of %v = %v, %v", ref, got, err)
	}
	for _, bad := range []string{"", "eu", "Pod/team/eu", "KubernetesCluster/team/"} {
		if _, err := ParseClusterReference(bad); err == nil {
			t.Errorf("ParseClusterReference(%q) succeeded", bad)
		}
	}
}
