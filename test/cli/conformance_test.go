package cli

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// everyCommand lists every command a user can run, walking the help's "Available
// Commands" (cobra's own help and completion left out).
func everyCommand(t *testing.T) []string {
	t.Helper()
	var out []string
	var walk func(path []string)
	walk = func(path []string) {
		r := terraplane(t, userEnv(t), append(slices.Clone(path), "--help")...)
		_, list, found := strings.Cut(r.stdout, "Available Commands:\n")
		if !found {
			return
		}
		list, _, _ = strings.Cut(list, "\n\n")
		for _, line := range strings.Split(list, "\n") {
			name := strings.Fields(line)[0]
			if name == "help" || name == "completion" {
				continue
			}
			sub := append(slices.Clone(path), name)
			out = append(out, strings.Join(sub, " "))
			walk(sub)
		}
	}
	walk(nil)
	return out
}

// assertFails checks a failure that is not a usage error: exit 1, and an error: line
// last on stderr (after the progress lines of long commands), with no pointer to --help.
func assertFails(t *testing.T, r result) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if r.code != 1 || !strings.HasPrefix(lines[len(lines)-1], "error: ") || strings.Contains(r.stderr, "--help") {
		t.Errorf("exit %d, want 1 with an error: line last:\n%s", r.code, r.stderr)
	}
}

// exempt are the commands that take no -o, and why.
var exempt = map[string]string{
	"controller":    "runs the controllers until stopped: its output is logs",
	"dev":           "runs a control plane until stopped: its output is progress and events",
	"runner":        "serves one runner pool for the controller until stopped: its output is logs",
	"stack-manager": "runs the stack manager until stopped: its output is logs",
	"plan":          "a command group", "stack": "a command group", "module": "a command group", "claim": "a command group", "get": "a command group",
	"rollout": "a command group", "policy": "a command group",
}

// revisedClass is a ModuleClass in ns with two revisions, the second its latest and
// complete, as the revision controller would have reported them.
func revisedClass(t *testing.T, ns, name string) {
	t.Helper()
	c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.SpecTemplate.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "unused"}
	now := metav1.Now()
	c.Status.LatestRevision = name + "-2"
	c.Status.Revisions = []common.RevisionCount{{Name: name + "-2", Revision: 2, CreatedAt: now, Resources: 1, Ready: 1},
		{Name: name + "-1", Revision: 1, CreatedAt: now}}
	c.Status.Rollout = &common.RolloutStatus{Revision: name + "-2", StartedAt: now, Wave: 1, Updated: 1, Total: 1, CompletedAt: &now}
	create(t, c)
}

// heldModule is a paused Module in ns holding plan id, awaiting approval.
func heldModule(t *testing.T, ns, name, id string) {
	t.Helper()
	if err := env.Namespace(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{common.PausedAnnotation: "true"}}}
	m.Spec.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "unused"}
	m.Spec.ReclaimPolicy = common.ReclaimRetain
	m.Spec.Approval = common.ApprovalManual
	m.Status.Conditions = []metav1.Condition{condition(common.TypeSynced, metav1.ConditionFalse, common.ReasonAwaitingApproval, "plan "+id+" awaits approval")}
	m.Status.Terraform.Plan = &common.PlanSummary{ID: id, Reason: common.PlanCreate, Add: 1, CreatedAt: metav1.NewTime(time.Now().Add(-time.Minute)),
		Changes: []common.PlannedChange{{Address: "terraform_data.thing", Actions: []string{"create"}}}}
	create(t, m)
}

// TestConformance runs every command the way kubectl users expect: -o json gives JSON
// that parses; -n defaults to the context's namespace, or to the admin namespace for
// managed kinds; a usage error exits 2 and any other failure 1.
func TestConformance(t *testing.T) {
	const ns, team = "cli-conformance", "cli-conformance-team"
	ctx := context.Background()
	g := NewWithT(t)
	bucketChain(t, ns, "conf", "c0c0c0c0c0c0c0c0")
	heldModule(t, adminNS, "conf-held", "beefbeefbeefbeef")
	heldModule(t, team, "conf-team", "cafecafecafecafe")
	revisedClass(t, adminNS, "conf-rollout")
	_, err := env.Tenant(ctx, "dora", team)
	g.Expect(err).NotTo(HaveOccurred())

	// the admin's context names a namespace that holds nothing: defaults must not lean on it
	admin := userEnv(t, "KUBECONFIG="+kubeconfigAs(t, "", "cli-conformance-elsewhere"))
	tf := framework.TerraformBinary()
	modDir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(modDir, "main.tf"), []byte(flatModule["main.tf"]), 0o644)).To(Succeed())
	migDir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(migDir, "main.tf"), []byte(flatModule["main.tf"]+"\n"), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(migDir, "terraform.tfvars"), []byte("name = \"conf\"\n"), 0o644)).To(Succeed())
	plain(t, migDir, "init", "-input=false")
	plain(t, migDir, "apply", "-auto-approve", "-input=false")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	alpha := "../e2e/testdata/stacks/alpha"
	exported := filepath.Join(t.TempDir(), "exported")
	policyDir := t.TempDir()
	policyFile, planFile := filepath.Join(policyDir, "policy.yaml"), filepath.Join(policyDir, "plan.json")
	g.Expect(os.WriteFile(policyFile, []byte(conformancePolicy), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(planFile, []byte(conformancePlan), 0o644)).To(Succeed())

	// in the order they run: migrate makes the Module export hands back
	cases := []struct {
		path string
		ok   []string // succeeds with -o json
		fail []string // fails (exit 1)
	}{
		{"version", []string{"version"}, nil},
		{"module inspect", []string{"module", "inspect", modDir}, []string{"module", "inspect", "/missing"}},
		{"claim generate", []string{"claim", "generate", modDir, "--kind", "Thing", "--group", "cli.example.org"}, []string{"claim", "generate", "/missing", "--kind", "X", "--group", "g"}},
		{"stack build", []string{"stack", "build", alpha}, []string{"stack", "build", "/missing"}},
		{"stack push", []string{"stack", "push", alpha, host + "/stacks/alpha:v1"}, []string{"stack", "push", "/missing", host + "/stacks/x:v1"}},
		{"stack inspect", []string{"stack", "inspect", host + "/stacks/alpha:v1"}, []string{"stack", "inspect", host + "/stacks/none:v1"}},
		{"stack index", []string{"stack", "index", host}, []string{"stack", "index", "127.0.0.1:1"}},
		{"migrate", []string{"migrate", migDir, "--name", "conf-migrated", "--terraform", tf}, []string{"migrate", "/missing"}},
		{"export", []string{"export", "module/conf-migrated", "--out", exported, "--terraform", tf}, []string{"export", "module/nope", "--terraform", tf}},
		{"unlock", []string{"unlock", "module/conf-held"}, []string{"unlock", "module/nope"}},
		{"abandon", []string{"abandon", "module/conf-held", "--undo"}, []string{"abandon", "module/nope"}},
		{"plan show", []string{"plan", "show", "Modules", "conf-held"}, []string{"plan", "show", "module/nope"}},
		{"approve", []string{"approve", "module.terraform.terraplane.io/conf-held", "--yes"}, []string{"approve", "module/nope", "--yes"}},
		{"trace", []string{"trace", "bucket/conf", "-n", ns}, []string{"trace", "bucket/nope", "-n", ns}},
		{"get approvals", []string{"get", "approvals"}, []string{"get", "approvals", "--kubeconfig", twoContexts(t)}},
		{"rollout status", []string{"rollout", "status", "moduleclass/conf-rollout"}, []string{"rollout", "status", "moduleclass/nope"}},
		{"rollout pause", []string{"rollout", "pause", "moduleclass/conf-rollout"}, []string{"rollout", "pause", "moduleclass/nope"}},
		{"rollout resume", []string{"rollout", "resume", "moduleclass/conf-rollout"}, []string{"rollout", "resume", "moduleclass/nope"}},
		{"rollout undo", []string{"rollout", "undo", "moduleclass/conf-rollout"}, []string{"rollout", "undo", "moduleclass/nope"}},
		{"policy test", []string{"policy", "test", policyFile, "--plan", planFile}, []string{"policy", "test", policyFile, "--plan", filepath.Join(policyDir, "nope.json")}},
	}
	var covered []string
	for _, tc := range cases {
		covered = append(covered, tc.path)
		t.Run(tc.path, func(t *testing.T) {
			r := terraplane(t, admin, append(tc.ok, "-o", "json")...)
			if r.code != 0 || !json.Valid([]byte(r.stdout)) || !strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
				t.Errorf("-o json: exit %d, stdout is not one JSON object:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			r = terraplane(t, admin, append(tc.ok, "-o", "xml")...)
			assertOneLineError(t, r, 2, `"xml" is not an output format`)
			r = terraplane(t, admin, append(tc.ok, "one", "too", "many")...)
			assertOneLineError(t, r, 2, "")
			if tc.fail != nil {
				assertFails(t, terraplane(t, admin, tc.fail...))
			}
		})
	}
	t.Run("every command is covered", func(t *testing.T) {
		for _, path := range everyCommand(t) {
			if _, ok := exempt[path]; !ok && !slices.Contains(covered, path) {
				t.Errorf("terraplane %s has no conformance case", path)
			}
		}
		for path, why := range exempt {
			r := terraplane(t, admin, append(strings.Fields(path), "-o", "json")...)
			assertOneLineError(t, r, 2, "")
			t.Logf("terraplane %s takes no -o: %s", path, why)
		}
	})
	t.Run("-n", func(t *testing.T) { conformNamespaces(t, admin, ns, team, modDir) })
}

// conformNamespaces checks -n's default for every command that takes -n.
func conformNamespaces(t *testing.T, admin []string, ns, team, modDir string) {
	data := func(environ []string, args ...string) map[string]any {
		t.Helper()
		r := terraplane(t, environ, append(args, "-o", "json")...)
		var m map[string]any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &m) != nil {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return m
	}
	namespaceOf := func(m map[string]any) any {
		if meta, ok := m["metadata"].(map[string]any); ok {
			return meta["namespace"]
		}
		return m["namespace"]
	}
	nowhere := []string{"--admin-namespace", "cli-conformance-nowhere"}
	// rolloutIn: a class is looked for in the admin namespace, not the context's
	rolloutIn := func(verb string) func(t *testing.T) {
		return func(t *testing.T) {
			got := data(admin, "rollout", verb, "moduleclass/conf-rollout")
			NewWithT(t).Expect(namespaceOf(got)).To(Equal(adminNS))
			assertOneLineError(t, terraplane(t, admin, "rollout", verb, "moduleclass/conf-rollout", nowhere[0], nowhere[1]), 1, "cli-conformance-nowhere")
		}
	}
	checks := map[string]func(t *testing.T){
		"trace": func(t *testing.T) {
			got := data(userEnv(t, "KUBECONFIG="+kubeconfigAs(t, "", ns)), "trace", "bucket/conf")
			NewWithT(t).Expect(namespaceOf(got)).To(Equal(ns), "a claim is looked for in the context's namespace")
		},
		"plan show": func(t *testing.T) {
			NewWithT(t).Expect(namespaceOf(data(admin, "plan", "show", "module/conf-held"))).To(Equal(adminNS))
			assertOneLineError(t, terraplane(t, admin, append([]string{"plan", "show", "module/conf-held"}, nowhere...)...), 1, "cli-conformance-nowhere")
		},
		"approve": func(t *testing.T) {
			assertOneLineError(t, terraplane(t, admin, append([]string{"approve", "module/conf-held", "--yes"}, nowhere...)...), 1, "cli-conformance-nowhere")
		},
		"unlock": func(t *testing.T) {
			NewWithT(t).Expect(namespaceOf(data(admin, "unlock", "module/conf-held"))).To(Equal(adminNS))
			assertOneLineError(t, terraplane(t, admin, append([]string{"unlock", "module/conf-held"}, nowhere...)...), 1, "cli-conformance-nowhere")
		},
		"abandon": func(t *testing.T) {
			NewWithT(t).Expect(namespaceOf(data(admin, "abandon", "module/conf-held", "--undo"))).To(Equal(adminNS))
			assertOneLineError(t, terraplane(t, admin, append([]string{"abandon", "module/conf-held", "--undo"}, nowhere...)...), 1, "cli-conformance-nowhere")
		},
		"export": func(t *testing.T) {
			assertOneLineError(t, terraplane(t, admin, append([]string{"export", "module/conf-migrated"}, nowhere...)...), 1, "cli-conformance-nowhere")
		},
		"migrate": func(t *testing.T) {
			m := &terraformv1.Module{}
			NewWithT(t).Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: adminNS, Name: "conf-migrated"}, m)).To(Succeed(), "migrate makes its Module in the admin namespace")
		},
		"get approvals": func(t *testing.T) {
			g := NewWithT(t)
			dora := userEnv(t, "KUBECONFIG="+kubeconfigAs(t, "dora", team))
			r := terraplane(t, dora, "get", "approvals")
			g.Expect(r.code).To(BeZero(), r.stderr)
			g.Expect(r.stdout).To(MatchRegexp(`(?m)^` + team + ` +Module/conf-team +- +cafecafecafecafe +AwaitingApproval +\+1 ~0 -0 -/\+0 +\S+$`))
			g.Expect(r.stderr).To(ContainSubstring("looked in " + adminNS + ", " + team))
			items := data(admin, "get", "approvals", "-n", team)["items"].([]any)
			g.Expect(items).To(HaveLen(1), "-n looks in that namespace only")
		},
		"rollout status": rolloutIn("status"), "rollout pause": rolloutIn("pause"), "rollout resume": rolloutIn("resume"), "rollout undo": rolloutIn("undo"),
		"module inspect": func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(namespaceOf(data(userEnv(t), "module", "inspect", modDir))).To(Equal(adminNS))
			g.Expect(namespaceOf(data(userEnv(t), "module", "inspect", modDir, "-n", "platform"))).To(Equal("platform"))
		},
		"claim generate": func(t *testing.T) {
			items := data(userEnv(t), "claim", "generate", modDir, "--kind", "Thing", "--group", "cli.example.org", "-n", "platform")["items"].([]any)
			NewWithT(t).Expect(namespaceOf(items[0].(map[string]any))).To(Equal("platform"))
		},
	}
	for _, path := range everyCommand(t) {
		r := terraplane(t, userEnv(t), append(strings.Fields(path), "--help")...)
		if !strings.Contains(r.stdout, "-n, --namespace") {
			continue
		}
		check, ok := checks[path]
		if !ok {
			t.Errorf("terraplane %s takes -n but has no check of its default", path)
			continue
		}
		if !strings.Contains(r.stdout, "default") {
			t.Errorf("terraplane %s --help does not say what -n defaults to", path)
		}
		t.Run(path, check)
	}
}

// conformancePolicy is a plan policy that conformancePlan passes: every bucket is tagged.
const conformancePolicy = `apiVersion: policy.terraplane.io/v1alpha1
kind: PlanPolicy
metadata:
  name: tagged
spec:
  rules:
  - name: team-tag
    expression: "plan.resource_changes.all(rc, rc.change.after == null || 'team' in rc.change.after.tags)"
    message: every resource carries a team tag
`

// conformancePlan is terraform's plan JSON of one tagged bucket.
const conformancePlan = `{"format_version":"1.2","resource_changes":[{"address":"aws_s3_bucket.this","mode":"managed","type":"aws_s3_bucket","name":"this",
"provider_name":"registry.terraform.io/hashicorp/aws","change":{"actions":["create"],"before":null,"after":{"bucket":"b","tags":{"team":"a"}},
"after_unknown":{"id":true},"before_sensitive":false,"after_sensitive":{"tags":{}}}}]}`
