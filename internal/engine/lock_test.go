package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lockOf writes a dependency lock holding address = version pairs, as terraform does.
func lockOf(pairs ...string) []byte {
	out := "# This file is maintained automatically by \"terraform init\".\n"
	for i := 0; i+1 < len(pairs); i += 2 {
		out += "\nprovider \"" + pairs[i] + "\" {\n  version     = \"" + pairs[i+1] + "\"\n  constraints = \"~> 3.0\"\n  hashes = [\n    \"h1:abc=\",\n  ]\n}\n"
	}
	return []byte(out)
}

// TestProviderChanges: a version that moved is a change; a provider only one lock holds,
// an unreadable lock, or no lock at all is none; OpenTofu's host matches terraform's.
func TestProviderChanges(t *testing.T) {
	const random, aws = "registry.terraform.io/hashicorp/random", "registry.terraform.io/hashicorp/aws"
	cases := map[string]struct {
		from, to []byte
		want     []ProviderChange
	}{
		"same versions": {lockOf(random, "3.9.0", aws, "5.100.0"), lockOf(aws, "5.100.0", random, "3.9.0"), nil},
		"one moved": {lockOf(random, "3.9.0", aws, "5.100.0"), lockOf(random, "3.10.0", aws, "5.100.0"),
			[]ProviderChange{{Provider: random, From: "3.9.0", To: "3.10.0"}}},
		"two moved, sorted": {lockOf(random, "3.9.0", aws, "5.100.0"), lockOf(random, "3.8.1", aws, "5.101.0"),
			[]ProviderChange{{Provider: aws, From: "5.100.0", To: "5.101.0"}, {Provider: random, From: "3.9.0", To: "3.8.1"}}},
		"a provider added is no change":   {lockOf(random, "3.9.0"), lockOf(random, "3.9.0", aws, "5.101.0"), nil},
		"a provider dropped is no change": {lockOf(random, "3.9.0", aws, "5.100.0"), lockOf(random, "3.9.0"), nil},
		"OpenTofu's host is terraform's": {lockOf(random, "3.9.0"), lockOf("registry.opentofu.org/hashicorp/random", "3.10.0"),
			[]ProviderChange{{Provider: "registry.opentofu.org/hashicorp/random", From: "3.9.0", To: "3.10.0"}}},
		"another registry is another provider": {lockOf(random, "3.9.0"), lockOf("example.com/hashicorp/random", "3.10.0"), nil},
		"no lock before":                       {nil, lockOf(random, "3.10.0"), nil},
		"no lock after":                        {lockOf(random, "3.9.0"), nil, nil},
		"an unreadable lock":                   {[]byte("provider {"), lockOf(random, "3.10.0"), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ProviderChanges(tc.from, tc.to)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLockedVersions: provider blocks in file order, other blocks skipped, a version that
// is no string refused.
func TestLockedVersions(t *testing.T) {
	got, err := lockedVersions([]byte(`
provider "registry.terraform.io/hashicorp/random" {
  version = "3.9.0"
}
module "x" {}
provider "registry.terraform.io/hashicorp/aws" {
  version = "5.100.0"
  hashes  = ["h1:x="]
}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []lockedProvider{{"registry.terraform.io/hashicorp/random", "3.9.0"}, {"registry.terraform.io/hashicorp/aws", "5.100.0"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := lockedVersions([]byte("provider \"a/b\" {\n  version = 3\n}\n")); err == nil {
		t.Error("a number as version was read")
	}
}

// TestLockConflict: the init errors of a lock the configuration or the sources cannot
// honour (as terraform wraps them) ask for a new choice; other init errors do not.
func TestLockConflict(t *testing.T) {
	cases := map[string]bool{
		"Could not retrieve the list of available versions for provider\nhashicorp/random: locked provider registry.terraform.io/hashicorp/random\n3.9.0 does not match configured version constraint ~> 3.10; must use\nterraform init -upgrade": true,
		"Could not retrieve the list of available versions for provider\nhashicorp/random: the previously-selected version 3.8.0 is no longer\navailable":                                                                                         true,
		"provider registry.terraform.io/hashicorp/random: the cached package does not match any of the checksums recorded in the dependency lock file":                                                                                            false,
		"Failed to query available provider packages: could not connect to registry.terraform.io":                                                                                                                                                 false,
	}
	for msg, want := range cases {
		if got := lockConflict.MatchString(msg); got != want {
			t.Errorf("lockConflict(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestPlanIDCoversProviders: a plan that moves provider versions has another id than the
// same plan without, and each move its own; a plan that moves none keeps the id it had.
func TestPlanIDCoversProviders(t *testing.T) {
	js := decodePlan(t, replacementPlan)
	key := []byte("key")
	base := planID(js, key, nil)
	up := planID(js, key, []ProviderChange{{Provider: "registry.terraform.io/hashicorp/random", From: "3.9.0", To: "3.10.0"}})
	other := planID(js, key, []ProviderChange{{Provider: "registry.terraform.io/hashicorp/random", From: "3.9.0", To: "3.11.0"}})
	if up == base || other == base || up == other {
		t.Errorf("ids: none %s, to 3.10.0 %s, to 3.11.0 %s; want three ids", base, up, other)
	}
	if empty := planID(js, key, []ProviderChange{}); empty != base {
		t.Errorf("an empty list of moves changed the id: %s, want %s", empty, base)
	}
}
