package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/statelock"
	"terraplane.io/terraplane/test/framework"
)

// outlastingModule's create outlasts any deadline the first time (its provisioner sleeps
// ten minutes), and ends at once after: each run it starts is a line in var.log.
var outlastingModule = map[string]string{"main.tf": `
variable "log" { type = string }
resource "terraform_data" "server" {
  provisioner "local-exec" {
    command = "echo run >> ${var.log}; if [ $(wc -l < ${var.log}) -gt 1 ]; then exit 0; fi; exec sleep 600"
  }
}
`}

// seen is what a watch saw of a namespace, in order.
type seen struct {
	mu sync.Mutex
	// holders are the state lock's holder ids, "" when free.
	holders []string
	// timedOut: a version of the Module said its run timed out, and still recorded its
	// create as pending.
	timedOut, pendingKept bool
	message               string
}

// watchTimeout records, until ctx ends, the state lock's holders and the Module's
// versions that report a run cut off by its deadline.
func watchTimeout(t *testing.T, ctx context.Context, ns, cutOff string) *seen {
	t.Helper()
	w, err := client.NewWithWatch(env.ControlPlane.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	leases, err := w.Watch(ctx, &coordinationv1.LeaseList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	stateList := &metav1.PartialObjectMetadataList{}
	stateList.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	states, err := w.Watch(ctx, stateList, client.InNamespace(ns), client.MatchingLabels{"tfstate": "true"})
	if err != nil {
		t.Fatal(err)
	}
	modules, err := w.Watch(ctx, &terraformv1.ModuleList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	s := &seen{}
	// A workspace's first locks are kept on its state Secret, later ones on its Lease.
	lockSeen := func(ev watch.Event) {
		obj, ok := ev.Object.(client.Object)
		if !ok || ev.Type == watch.Deleted || ev.Type == watch.Error || !strings.Contains(obj.GetName(), "tfstate-") {
			return
		}
		holder := ""
		if info := statelock.HeldOn(obj); info != nil {
			holder = info.ID
		}
		s.mu.Lock()
		if n := len(s.holders); n == 0 || s.holders[n-1] != holder {
			s.holders = append(s.holders, holder)
		}
		s.mu.Unlock()
	}
	go func() {
		defer leases.Stop()
		defer states.Stop()
		defer modules.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-leases.ResultChan():
				lockSeen(ev)
			case ev := <-states.ResultChan():
				lockSeen(ev)
			case ev := <-modules.ResultChan():
				m, ok := ev.Object.(*terraformv1.Module)
				if !ok {
					continue
				}
				if c := framework.Condition(m.Status.Conditions, common.TypeSynced); c.Status == metav1.ConditionFalse && strings.Contains(c.Message, cutOff) {
					s.mu.Lock()
					s.timedOut, s.message = true, c.Reason+": "+c.Message
					s.pendingKept = s.pendingKept || m.Annotations[common.CreatePendingAnnotation] != ""
					s.mu.Unlock()
				}
			}
		}
	}()
	return s
}

// TestTimeoutCutsARunOff: a Module whose create outlasts its spec.timeout is stopped at
// that deadline, says so in Synced (ReconcileError: it is retried), keeps its
// create-pending record as any run whose outcome terraform may not have recorded does,
// releases its state lock, and is retried: the retry carries on from the state the
// stopped run saved, and the Module is Ready.
func TestTimeoutCutsARunOff(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-timeout"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	runs := filepath.Join(t.TempDir(), "runs")
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	s := watchTimeout(t, watchCtx, ns, "did not finish within 1m0s")

	By(t, "a Module whose first create sleeps ten minutes, under a one-minute spec.timeout")
	inputs, _ := json.Marshal(map[string]string{"log": runs})
	m := moduleFrom(g, ctx, ns, "outlasting", outlastingModule, string(inputs))
	m.Spec.Timeout = &metav1.Duration{Duration: time.Minute}
	start := time.Now()
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())

	By(t, "it is cut off at its deadline, says so, keeps its create pending, and frees its lock")
	g.Eventually(func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.timedOut }).WithTimeout(3 * time.Minute).Should(BeTrue())
	cutOff := time.Since(start)
	s.mu.Lock()
	t.Logf("FIGURE cut off after %s: %s", cutOff.Round(time.Second), s.message)
	g.Expect(s.message).To(HavePrefix(common.ReasonReconcileError+": "), "retried, not stalled")
	g.Expect(s.pendingKept).To(BeTrue(), "the create's outcome is unknown: its record stays")
	s.mu.Unlock()
	g.Expect(cutOff).To(BeNumerically("<", 2*time.Minute+30*time.Second), "a minute, and the grace terraform gets to stop")

	By(t, "the retry carries on and the Module is Ready")
	waitModuleReady(g, ctx, m)
	log, err := os.ReadFile(runs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(string(log), "run")).To(Equal(2), "the cut-off run, and its retry")
	g.Expect(m.Annotations).NotTo(HaveKey(common.CreatePendingAnnotation), "the retry's outcome is known")
	g.Eventually(func(g Gomega) {
		s.mu.Lock()
		defer s.mu.Unlock()
		t.Logf("lock holders, in order: %q", s.holders)
		g.Expect(len(s.holders)).To(BeNumerically(">=", 4), "the cut-off run's lock, freed, the retry's, freed")
		g.Expect(s.holders[len(s.holders)-1]).To(BeEmpty(), "no lock is left")
		for i := 1; i < len(s.holders); i++ {
			g.Expect(s.holders[i-1] == "" || s.holders[i] == "").To(BeTrue(), "a lock is freed before the next run takes it")
		}
	}).WithTimeout(timeout).Should(Succeed())
	deleteModule(g, ctx, m)
}
