package chaos

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
	"terraplane.io/terraplane/test/framework"
)

// slowModule's create and destroy each take a couple of seconds and then append to a
// ledger, so the test counts what really happened outside Terraform's state. A killed
// controller's terraform dies with it, but the provisioner's shell does not: it still
// writes its line, as a cloud finishes a create whose caller is gone.
const slowModule = `
variable "name" { type = string }
variable "ledger" { type = string }
variable "rev" {
  type    = number
  default = 0
}
variable "sleep" {
  type    = number
  default = 2
}
resource "terraform_data" "x" {
  input = { name = var.name, ledger = var.ledger, rev = var.rev, sleep = var.sleep }
  provisioner "local-exec" {
    command = "sleep ${self.input.sleep}; echo create ${self.input.name} >> ${self.input.ledger}"
  }
  provisioner "local-exec" {
    when    = destroy
    command = "sleep ${self.input.sleep}; echo destroy ${self.input.name} >> ${self.input.ledger}"
  }
}
output "rev" { value = terraform_data.x.output.rev }
`

const ns = "chaos"

type scenario struct {
	t        *testing.T
	ledger   string
	names    []string
	deleted  map[string]bool
	mu       sync.Mutex
	maxRes   map[string]int // state Secret -> most resources seen
	shrunk   []string       // state Secrets seen empty after holding resources
	deleting map[string]bool
}

func (s *scenario) module(name string, rev int) *terraformv1.Module {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "slow-module"}}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"name":%q,"ledger":%q,"rev":%d}`, name, s.ledger, rev)}
	return m
}

// ledgerCount counts verb lines ("create", "destroy") for name.
func (s *scenario) ledgerCount(verb, name string) int {
	b, _ := os.ReadFile(s.ledger)
	return strings.Count(string(b), verb+" "+name+"\n")
}

// watchState samples every state Secret and records any that drops to an empty state
// after holding resources while its Module is not being deleted.
func (s *scenario) watchState(ctx context.Context) {
	for ctx.Err() == nil {
		var list corev1.SecretList
		if env.Client.List(ctx, &list, client.InNamespace(ns)) == nil {
			for _, sec := range list.Items {
				if !strings.HasPrefix(sec.Name, "tfstate-") {
					continue
				}
				n, ok := resources(sec.Data["tfstate"])
				if !ok {
					continue
				}
				s.mu.Lock()
				if n == 0 && s.maxRes[sec.Name] > 0 && !s.deleting[sec.Name] {
					s.shrunk = append(s.shrunk, sec.Name)
				}
				s.maxRes[sec.Name] = max(s.maxRes[sec.Name], n)
				s.mu.Unlock()
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// resources counts the resources of a gzipped state.
func resources(gz []byte) (int, bool) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return 0, false
	}
	var st struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if json.NewDecoder(zr).Decode(&st) != nil {
		return 0, false
	}
	return len(st.Resources), true
}

// step runs the scenario's actions before kill i: the first batch of Modules at
// first; then, every round, one new Module, an update of a random one, and (every third
// round) the deletion of a random one, so every kill lands among creates, updates and
// deletes in flight.
func (s *scenario) step(ctx context.Context, r *rand.Rand, i int) {
	if i == 0 {
		for _, n := range s.names {
			s.create(ctx, n)
		}
	}
	n := fmt.Sprintf("r%02d", i)
	s.names = append(s.names, n)
	s.create(ctx, n)
	live := s.live()
	s.update(ctx, live[r.IntN(len(live))], i+1)
	if i%3 == 2 {
		s.remove(ctx, live[r.IntN(len(live))])
	}
}

func (s *scenario) create(ctx context.Context, n string) {
	if err := env.Client.Create(ctx, s.module(n, 0)); err != nil {
		s.t.Fatalf("create %s: %v", n, err)
	}
}

// live lists the Modules not deleted.
func (s *scenario) live() []string {
	var out []string
	for _, n := range s.names {
		if !s.deleted[n] {
			out = append(out, n)
		}
	}
	return out
}

func (s *scenario) update(ctx context.Context, n string, rev int) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &terraformv1.Module{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, m); err != nil {
			return err
		}
		m.Spec.ForProvider = s.module(n, rev).Spec.ForProvider
		return env.Client.Update(ctx, m)
	})
	if err != nil {
		s.t.Fatalf("update %s: %v", n, err)
	}
}

func (s *scenario) remove(ctx context.Context, n string) {
	m := s.module(n, 0)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.deleted[n], s.deleting[resource.StateSecretName(m)] = true, true
	s.mu.Unlock()
	if err := env.Client.Delete(ctx, m); err != nil {
		s.t.Fatalf("delete %s: %v", n, err)
	}
}

// TestChaos SIGKILLs the controller at random moments while Modules are created,
// updated and deleted, then lets it converge and checks that nothing is stuck,
// duplicated or lost.
func TestChaos(t *testing.T) {
	r := rng(t)
	ctx := context.Background()
	dir := t.TempDir()
	s := &scenario{t: t, ledger: filepath.Join(dir, "ledger"), deleted: map[string]bool{}, maxRes: map[string]int{}, deleting: map[string]bool{}}
	for i := range *count {
		s.names = append(s.names, fmt.Sprintf("m%02d", i))
	}
	if err := env.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow-module"}, Data: map[string]string{"main.tf": slowModule}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	dbs := startDatabases(ctx, t)
	dbs.deleting = func(o client.Object) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.deleting[resource.StateSecretName(o)] = true
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.watchState(watchCtx)

	workDir, logPath := filepath.Join(dir, "work"), filepath.Join(dir, "controller.log")
	t.Cleanup(func() { keepLog(t, logPath) })
	chaosStart := time.Now()
	var killed []time.Time
	for i := range *kills {
		c := startController(t, workDir, logPath)
		s.step(ctx, r, i)
		dbs.step(ctx, r, i)
		time.Sleep(time.Duration(1000+r.IntN(3500)) * time.Millisecond)
		c.Kill()
		killed = append(killed, time.Now())
	}
	killPhase := time.Since(chaosStart)
	time.Sleep(3 * time.Second) // orphaned provisioner shells finish their lines

	c := startController(t, workDir, logPath)
	convergeStart := time.Now()
	interrupted := s.converge(dbs)
	converge := time.Since(convergeStart)
	c.Stop() // gracefully: whatever lock is left now, nothing holds it
	stopWatch()

	held, after := lockReleases(t, logPath, killed)
	duplicates := 0
	for _, n := range s.names {
		if k := s.ledgerCount("create", n); k > 1 {
			duplicates++
			t.Errorf("%s was created %d times", n, k)
		}
	}
	stale := s.staleLocks(ctx)
	orphans := dbs.check(logPath)
	t.Logf("FIGURES kills=%d kill-phase=%s converge=%s resources=%d deleted=%d", *kills, killPhase.Round(time.Second), converge.Round(time.Second), len(s.names), len(s.deleted))
	t.Logf("FIGURES stale-locks-cleared=%d held-for(max)=%s kill-to-release(median)=%s kill-to-release(max)=%s stale-locks-left=%d",
		len(held), maxDur(held), median(after), maxDur(after), stale)
	t.Logf("FIGURES duplicates=%d interrupted-creates=%d (nothing made, created again: %d; object made, stopped at CreateInterrupted: %d) state-shrunk=%d",
		duplicates, interrupted[0]+interrupted[1], interrupted[0], interrupted[1], len(s.shrunk))
	t.Logf("FIGURES databases=%d deleted=%d recovered-creates(all kinds)=%d stopped-at-CreateInterrupted=%d orphans-or-duplicates=%d",
		len(dbs.names), len(dbs.deleted), recoveredCreates(t, logPath), len(dbs.stopped), orphans)
	if stale > 0 {
		t.Errorf("%d state locks still held", stale)
	}
	if len(s.shrunk) > 0 {
		t.Errorf("state Secrets dropped to an empty state: %v", s.shrunk)
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

func maxDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Max(ds).Round(time.Millisecond)
}

// converge waits until every Module is Ready, gone where deleted, or stopped at
// CreateInterrupted with its object made, and every Database is Ready or gone. Acting as the user, it answers a
// CreateInterrupted whose object was never made with create-again. It returns the
// interrupted creates: [0] nothing made, [1] object made.
func (s *scenario) converge(dbs *databases) [2]int {
	ctx, cancel := within(s.t, 4*time.Minute)
	defer cancel()
	var answered, stopped = map[string]bool{}, map[string]bool{}
	var last []string // what was unsettled at the last look before the deadline
	for {
		pending := append(s.unsettled(ctx, answered, stopped), dbs.unsettled(ctx)...)
		if len(pending) == 0 {
			return [2]int{len(answered), len(stopped)}
		}
		if ctx.Err() != nil {
			s.t.Fatalf("not converged: %s", strings.Join(last, "; "))
		}
		last = pending
		time.Sleep(time.Second)
	}
}

// unsettled lists the Modules not yet where they should end, answering CreateInterrupted.
func (s *scenario) unsettled(ctx context.Context, answered, stopped map[string]bool) []string {
	var out []string
	for _, n := range s.names {
		m := &terraformv1.Module{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, m)
		if s.deleted[n] {
			if !apierrors.IsNotFound(err) {
				out = append(out, n+": not deleted yet")
			}
			continue
		}
		if err != nil {
			out = append(out, n+": "+err.Error())
			continue
		}
		synced := framework.Condition(m.Status.Conditions, common.TypeSynced)
		if synced.Reason == common.ReasonCreateInterrupted && synced.ObservedGeneration != m.Generation {
			// said by an earlier controller about an earlier spec: this one has not looked yet
			out = append(out, n+": CreateInterrupted not yet confirmed")
			continue
		}
		if synced.Reason == common.ReasonCreateInterrupted {
			if !strings.Contains(synced.Message, "terraform_data.x") {
				s.t.Errorf("%s: CreateInterrupted does not name terraform_data.x: %s", n, synced.Message)
			}
			if s.ledgerCount("create", n) > 0 {
				stopped[n] = true // stopping is right: a create again would duplicate it
				continue
			}
			answered[n] = true
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[common.CreateAgainAnnotation] = "true"
			_ = env.Client.Update(ctx, m)
			out = append(out, n+": answered create-again")
			continue
		}
		if framework.Condition(m.Status.Conditions, common.TypeReady).Status != metav1.ConditionTrue || synced.Status != metav1.ConditionTrue ||
			m.Status.ObservedGeneration != m.Generation {
			out = append(out, fmt.Sprintf("%s: %s %s", n, synced.Reason, synced.Message))
		}
	}
	return out
}

// staleLocks counts state locks still held, on Leases or on state Secrets.
func (s *scenario) staleLocks(ctx context.Context) int {
	held, err := statelock.HeldIn(ctx, env.Client, ns)
	if err != nil {
		s.t.Fatal(err)
	}
	for name, info := range held {
		s.t.Logf("still locked: %s by %s (%s)", name, info.Who, info.Operation)
	}
	return len(held)
}
