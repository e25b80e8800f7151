package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKubeRules picks the KUBE- chains and the jumps to them from other chains, and leaves
// everyone else's rules, and the rules inside KUBE- chains (flushed with them), alone.
func TestKubeRules(t *testing.T) {
	const listing = `-P INPUT ACCEPT
-P OUTPUT ACCEPT
-N KUBE-FIREWALL
-N KUBE-SERVICES
-N DOCKER-USER
-A INPUT -j KUBE-FIREWALL
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A INPUT -p tcp --dport 22 -j ACCEPT
-A DOCKER-USER -j RETURN
-A OUTPUT -m comment --comment "say \"hi\"" -g KUBE-SERVICES
-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -j DROP
-A FORWARD -j KUBE-FORWARDISH-NOT-A-CHAIN-YET
-A FORWARD -j KUBERNETES-NOT-OURS
`
	jumps, chains := kubeRules(listing)
	wantJumps := [][]string{
		{"INPUT", "-j", "KUBE-FIREWALL"},
		{"PREROUTING", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"},
		{"OUTPUT", "-m", "comment", "--comment", `say "hi"`, "-g", "KUBE-SERVICES"},
		{"FORWARD", "-j", "KUBE-FORWARDISH-NOT-A-CHAIN-YET"},
	}
	if d := cmp.Diff(wantJumps, jumps); d != "" {
		t.Errorf("jumps (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"KUBE-FIREWALL", "KUBE-SERVICES"}, chains); d != "" {
		t.Errorf("chains (-want +got):\n%s", d)
	}
}

// TestSplitRule keeps quoted words together, empty quotes as an empty argument.
func TestSplitRule(t *testing.T) {
	for in, want := range map[string][]string{
		`-A X -j Y`:                  {"-A", "X", "-j", "Y"},
		`-A X --comment "a b"  -j Y`: {"-A", "X", "--comment", "a b", "-j", "Y"},
		`--comment ""`:               {"--comment", ""},
		``:                           nil,
	} {
		if d := cmp.Diff(want, splitRule(in)); d != "" {
			t.Errorf("splitRule(%q) (-want +got):\n%s", in, d)
		}
	}
}
