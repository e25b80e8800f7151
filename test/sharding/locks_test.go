package sharding

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// spanModule writes a begin line to a ledger, works for var.sleep seconds, then writes
// an end line, each time it is created: two creates of one workspace at once show as
// two begins without an end between them.
const spanModule = `
variable "name" { type = string }
variable "ledger" { type = string }
variable "sleep" { type = number }
resource "terraform_data" "x" {
  input = var.name
  provisioner "local-exec" {
    command = "echo begin ${var.name} >> ${var.ledger}; sleep ${var.sleep}; echo end ${var.name} >> ${var.ledger}"
  }
}
`

// TestTwoControllersOnOneHost: two controllers on one host, neither elected, both
// reconcile the same slow creates. Each workspace is applied by one of them at a time:
// the other waits on the state lock, which names a live process, and never releases it.
func TestTwoControllersOnOneHost(t *testing.T) {
	ctx := context.Background()
	const lockNS = "two-controllers"
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	for _, n := range []string{lockNS, systemNS} {
		if err := env.Namespace(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: lockNS, Name: "span-module"}, Data: map[string]string{"main.tf": spanModule}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		c, err := env.StartController(bin, filepath.Join(dir, fmt.Sprintf("work-%d", i)), filepath.Join(dir, fmt.Sprintf("controller-%d.log", i)),
			"--user-error-retry", "2s", "--leader-election-namespace", systemNS)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
	}
	const modules = 3
	for i := range modules {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: lockNS, Name: fmt.Sprintf("slow-%d", i)}}
		m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "span-module"}}
		m.Spec.ReclaimPolicy = common.ReclaimDelete
		m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"name":%q,"ledger":%q,"sleep":6}`, m.Name, ledger)}
		if err := env.Client.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(4 * time.Minute)
	for readyIn(t, lockNS) < modules {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d Modules Ready", readyIn(t, lockNS), modules)
		}
		time.Sleep(time.Second)
	}
	time.Sleep(5 * time.Second) // a second apply, had one started, would now show
	overlaps, creates := spans(readFile(ledger))
	t.Logf("FIGURES two controllers on one host: %d creates of %d Modules, %d applies of one workspace at once", creates, modules, overlaps)
	if overlaps > 0 {
		t.Errorf("%d times two applies of one workspace ran at once:\n%s", overlaps, readFile(ledger))
	}
	if creates != modules {
		t.Errorf("%d creates of %d Modules, want one each:\n%s", creates, modules, readFile(ledger))
	}
}

// spans reads a ledger of begin and end (or create) lines: how often a workspace began
// while it was already running, and how many began in all.
func spans(ledger string) (overlaps, begins int) {
	open := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(ledger), "\n") {
		what, name, ok := strings.Cut(line, " ")
		switch {
		case !ok:
		case what == "begin":
			begins++
			if open[name] > 0 {
				overlaps++
			}
			open[name]++
		case what == "end" || what == "create":
			open[name]--
		}
	}
	return overlaps, begins
}

// readyIn counts the Ready Modules of namespace.
func readyIn(t *testing.T, namespace string) int {
	var list terraformv1.ModuleList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range list.Items {
		if meta.IsStatusConditionTrue(m.Status.Conditions, common.TypeReady) {
			n++
		}
	}
	return n
}
