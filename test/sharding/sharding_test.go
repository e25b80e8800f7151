package sharding

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// ledgerModule appends a begin line to a ledger when its create starts and a create
// line a second later, when it ends, so the test counts creates outside Terraform's state
// and sees two at once.
const ledgerModule = `
variable "name" { type = string }
variable "ledger" { type = string }
resource "terraform_data" "x" {
  input = var.name
  provisioner "local-exec" {
    command = "echo begin ${var.name} >> ${var.ledger}; sleep 1; echo create ${var.name} >> ${var.ledger}"
  }
}
`

const (
	ns       = "sharding"
	systemNS = "terraplane-system"
	shards   = 12
	replicas = 3
)

// resources is how many Modules the test makes (SHARD_RESOURCES overrides it).
func resources() int {
	if n, err := strconv.Atoi(os.Getenv("SHARD_RESOURCES")); err == nil && n > 0 {
		return n
	}
	return 300
}

// TestShardedReplicas runs three sharded replicas over hundreds of Modules, SIGKILLs one
// when a third are Ready, and checks that all end Ready, split between the replicas,
// with no state lock conflict and no create applied twice.
func TestShardedReplicas(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	for _, n := range []string{ns, systemNS} {
		if err := env.Namespace(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger-module"}, Data: map[string]string{"main.tf": ledgerModule}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	logs := make([]string, replicas)
	procs := make([]*framework.Controller, replicas)
	for i := range replicas {
		logs[i] = filepath.Join(dir, fmt.Sprintf("replica-%d.log", i))
		c, err := env.StartController(bin, filepath.Join(dir, fmt.Sprintf("work-%d", i)), logs[i], "--debug",
			"--shards", strconv.Itoa(shards), "--shard-identity", fmt.Sprintf("replica-%d", i), "--shard-lease-duration", "6s",
			"--leader-election-namespace", systemNS, "--user-error-retry", "3s", "--max-concurrent-terraform", "3")
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = c
		defer c.Stop()
	}
	n := resources()
	start := time.Now()
	created := make(chan error, 1)
	go func() { created <- createModules(ctx, n, ledger) }() // the kill lands while they still arrive
	waitReady(t, n/3, 6*time.Minute)
	victim := procs[1]
	held := heldBy(t, "replica-1")
	victim.Kill()
	t.Logf("killed replica-1 with %d of %d Ready, holding shards %v", countReady(t), n, held)
	takeover := waitTakeover(t, held, 2*time.Minute)
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	t.Logf("its shards were taken over %s after the kill", takeover.Round(100*time.Millisecond))
	interrupted := waitSettled(t, ledger, 10*time.Minute)
	t.Logf("FIGURES resources=%d replicas=%d shards=%d all-settled=%s takeover=%s interrupted-creates=%d",
		n, replicas, shards, time.Since(start).Round(time.Second), takeover.Round(100*time.Millisecond), interrupted)
	if takeover > 6*time.Second+30*time.Second {
		t.Errorf("takeover took %s: more than the lease duration and a reconcile", takeover)
	}

	applies, lockErrors := readLogs(t, logs)
	perReplica := make([]int, replicas)
	reapplied := 0
	for name, byReplica := range applies {
		total := 0
		for r, k := range byReplica {
			perReplica[r] += k
			total += k
		}
		switch {
		case total == 2 && byReplica[1] == 1:
			// The killed replica's apply ended but its record did not land: the new
			// holder applies the (unchanged) plan once more; the ledger below shows it
			// created nothing twice.
			reapplied++
		case total > 1:
			t.Errorf("%s was applied %d times (per replica: %v)", name, total, byReplica)
		}
	}
	t.Logf("FIGURES applies per replica=%v lock-conflicts=%d re-applied-after-kill=%d", perReplica, lockErrors, reapplied)
	for r, k := range perReplica {
		if k == 0 {
			t.Errorf("replica-%d applied nothing: the resources were not split", r)
		}
	}
	if lockErrors > 0 {
		t.Errorf("%d runs failed on a state lock another replica held", lockErrors)
	}
	for i := range n {
		name := fmt.Sprintf("m%03d", i)
		if k := strings.Count(readFile(ledger), "create "+name+"\n"); k > 1 {
			t.Errorf("%s was created %d times", name, k)
		}
	}
	overlaps, _ := spans(readFile(ledger))
	t.Logf("FIGURES applies of one workspace at once=%d", overlaps)
	if overlaps > 0 {
		t.Errorf("%d times two creates of one workspace ran at once", overlaps)
	}
}

// createModules creates n Modules of the ledger module.
func createModules(ctx context.Context, n int, ledger string) error {
	for i := range n {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("m%03d", i)}}
		m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "ledger-module"}}
		m.Spec.ReclaimPolicy = common.ReclaimDelete
		m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"name":%q,"ledger":%q}`, m.Name, ledger)}
		if err := env.Client.Create(ctx, m); err != nil {
			return fmt.Errorf("create %s: %w", m.Name, err)
		}
	}
	return nil
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// heldBy lists the shards whose Lease names holder.
func heldBy(t *testing.T, holder string) []string {
	var leases coordinationv1.LeaseList
	if err := env.Client.List(context.Background(), &leases, client.InNamespace(systemNS)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, "terraplane-shard-") && ptr.Deref(l.Spec.HolderIdentity, "") == holder {
			out = append(out, l.Name)
		}
	}
	return out
}

// waitTakeover waits until another replica holds every one of the shards, and says how long it took.
func waitTakeover(t *testing.T, shardLeases []string, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		taken := 0
		for _, name := range shardLeases {
			var l coordinationv1.Lease
			if env.Client.Get(context.Background(), client.ObjectKey{Namespace: systemNS, Name: name}, &l) == nil {
				if h := ptr.Deref(l.Spec.HolderIdentity, ""); h != "" && h != "replica-1" {
					taken++
				}
			}
		}
		if taken == len(shardLeases) {
			return time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("shards %v not taken over within %s", shardLeases, limit)
	return 0
}

// countReady counts the Modules Ready and in sync with their spec.
func countReady(t *testing.T) int {
	var list terraformv1.ModuleList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range list.Items {
		if framework.Condition(m.Status.Conditions, common.TypeReady).Status == metav1.ConditionTrue {
			n++
		}
	}
	return n
}

func waitReady(t *testing.T, want int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for countReady(t) < want {
		if time.Now().After(deadline) {
			t.Fatalf("only %d Modules Ready after %s, want %d", countReady(t), limit, want)
		}
		time.Sleep(time.Second)
	}
}

// waitSettled waits until every Module is Ready. A create the killed replica had in
// flight stops at CreateInterrupted, as it must for a user module; acting as the user,
// the test answers create-again where the ledger shows it never ran, and leaves the
// others stopped (a create again would duplicate them). It returns how many stopped.
func waitSettled(t *testing.T, ledger string, limit time.Duration) int {
	ctx := context.Background()
	deadline := time.Now().Add(limit)
	for {
		var list terraformv1.ModuleList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var pending []string
		interrupted := 0
		for i := range list.Items {
			m := &list.Items[i]
			synced := framework.Condition(m.Status.Conditions, common.TypeSynced)
			switch {
			case synced.Reason == common.ReasonCreateInterrupted && strings.Contains(readFile(ledger), "create "+m.Name+"\n"):
				interrupted++
			case synced.Reason == common.ReasonCreateInterrupted && m.Annotations[common.CreateAgainAnnotation] == "":
				m.Annotations[common.CreateAgainAnnotation] = "true"
				_ = env.Client.Update(ctx, m)
				pending = append(pending, m.Name+": answered create-again")
			case framework.Condition(m.Status.Conditions, common.TypeReady).Status != metav1.ConditionTrue:
				pending = append(pending, fmt.Sprintf("%s: %s %s", m.Name, synced.Reason, synced.Message))
			}
		}
		if len(pending) == 0 {
			return interrupted
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Modules not Ready after %s: %s", len(pending), limit, strings.Join(pending[:min(len(pending), 10)], "; "))
		}
		time.Sleep(time.Second)
	}
}

// readLogs counts, from the replicas' logs, each Module's successful applies per
// replica, and the runs that failed on a state lock.
func readLogs(t *testing.T, logs []string) (map[string][]int, int) {
	applies, lockErrors := map[string][]int{}, 0
	for r, path := range logs {
		err := framework.LogLines(path, func(line map[string]any) {
			if e := fmt.Sprint(line["error"]); strings.Contains(e, "state lock") || strings.Contains(e, "state is locked") {
				lockErrors++
			}
			if line["msg"] != "terraform ran" || line["verb"] != "apply" || line["error"] != nil {
				return
			}
			name := fmt.Sprint(line["resource"])
			if applies[name] == nil {
				applies[name] = make([]int, len(logs))
			}
			applies[name][r]++
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return applies, lockErrors
}
