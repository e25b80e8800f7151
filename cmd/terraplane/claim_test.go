package main

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
)

// TestClaimSkeletonConsent: the generated ModuleClass consents to the namespaces
// --allow-namespace names, and to none without it.
func TestClaimSkeletonConsent(t *testing.T) {
	m := &module.Module{Files: map[string][]byte{"main.tf": []byte(`variable "name" { type = string }`)}}
	for _, allow := range [][]string{nil, {"team-a", "team-b"}} {
		b, err := claimSkeleton(m, "Network", "platform.example.org", "networks", "network", "terraplane-system", allow)
		if err != nil {
			t.Fatal(err)
		}
		class := &terraformv1.ModuleClass{}
		if err := yaml.Unmarshal([]byte(strings.Split(string(b), "\n---\n")[0]), class); err != nil {
			t.Fatal(err)
		}
		switch {
		case allow == nil && class.AllowedNamespaces != nil:
			t.Errorf("without --allow-namespace the class consents to %v", class.AllowedNamespaces)
		case allow != nil && (class.AllowedNamespaces == nil || strings.Join(class.AllowedNamespaces.Names, ",") != "team-a,team-b"):
			t.Errorf("allowedNamespaces = %+v, want team-a, team-b", class.AllowedNamespaces)
		}
	}
}
