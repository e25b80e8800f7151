package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"terraplane.io/terraplane/internal/engine"
)

// row is one (variant, N) result: Terraplane cold or warm beside the yardsticks.
type row struct {
	variant string
	n       int
	start   string // cold: a fresh controller; warm: the same controller again
	single  singleResult
	raw     rawResult
	tp      tpResult
	rn      tpResult // the runner side: terraform in a runner process per pool
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// none stands for a side that did not run.
const none = "—"

// ratio is a / b, or none when b did not run.
func ratio(a, b time.Duration) string {
	if b <= 0 || a <= 0 {
		return none
	}
	return fmt.Sprintf("%.2f×", a.Seconds()/b.Seconds())
}

// perClaim is d per claim, or none when d was not measured.
func perClaim(d time.Duration, n int, ran bool) string {
	if !ran {
		return none
	}
	return fmt.Sprintf("%.2f", d.Seconds()/float64(n))
}

// perClaimFine is d per claim to the ten-thousandth of a second: a part of what the
// control plane spends on a claim, whose growth with N is read from it.
func perClaimFine(d time.Duration, n int) string {
	return fmt.Sprintf("%.4f", d.Seconds()/float64(n))
}

// ran reports whether the raw side ran.
func (r rawResult) ran() bool { return r.processes > 0 }

// ran reports whether Terraplane's side ran.
func (r tpResult) ran() bool { return r.ready.last > 0 }

// headline renders the main table: the first and the last claim Ready, against both
// yardsticks, and what it cost.
func headline(b *strings.Builder, rows []row) {
	b.WriteString("| module | N | controller | first Ready (s) | the first claim made: Ready (s) | all Ready (s) | ratio to the single workspace | single workspace: init + apply (s) | ratio to raw | raw, a workspace each: all applied (s) | median Ready (s) | terraform CPU per claim (s): Terraplane / single / raw | controller CPU (s) | kube-apiserver + etcd CPU (s): Terraplane / single / raw | controller peak RSS (MB) | terraform processes per claim: Terraplane / raw | disk per claim (KB): Terraplane / raw | controller API writes per claim | deletion (s): Terraplane / single destroy |\n")
	b.WriteString("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		n := float64(r.n)
		ran := r.tp.ran()
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s | %s / %s / %s | %s | %s / %s | %s / %s | %s | %s / %s |\n",
			r.variant, r.n, r.start, num2(r.tp.ready.first.Seconds(), ran), num2(r.tp.ready.made.Seconds(), ran), num(r.tp.ready.last.Seconds(), ran),
			ratio(r.tp.ready.last, r.single.applied()), num(r.single.applied().Seconds(), r.single.ran),
			ratio(r.tp.ready.last, r.raw.ready.last), num(r.raw.ready.last.Seconds(), r.raw.ran()), num(r.tp.ready.median.Seconds(), ran),
			perClaim(r.tp.tfCPU, r.n, ran), perClaim(r.single.init.cpu+r.single.apply.cpu, r.n, r.single.ran), perClaim(r.raw.tfCPU, r.n, r.raw.ran()),
			num(r.tp.ctrlCPU.Seconds(), ran), num(r.tp.cpCPU.Seconds(), ran), num(r.single.cpCPU.Seconds(), r.single.ran), num(r.raw.cpCPU.Seconds(), r.raw.ran()),
			num0(r.tp.peakRSS, ran), num(r.tp.processes/n, ran), num(float64(r.raw.processes)/n, r.raw.ran()),
			num0(float64(r.tp.diskBytes)/1024, ran), num0(float64(r.raw.diskBytes)/1024, r.raw.ran()), num(r.tp.writes/n, ran),
			num(r.tp.deletion.Seconds(), ran && r.tp.deletion > 0), num(r.single.destroy.wall.Seconds(), r.single.ran))
	}
}

// num is v with one decimal, or none when it was not measured; num0 without decimals.
func num(v float64, ran bool) string {
	if !ran {
		return none
	}
	return fmt.Sprintf("%.1f", v)
}

// num2 renders a time under a second or two, such as the first claim's, to the
// hundredth: its ratio to a claim alone is read from it.
func num2(v float64, ran bool) string {
	if !ran {
		return none
	}
	return fmt.Sprintf("%.2f", v)
}

func num0(v float64, ran bool) string {
	if !ran {
		return none
	}
	return fmt.Sprintf("%.0f", v)
}

// singleTable renders the single workspace's own commands, once per (variant, N).
func singleTable(b *strings.Builder, rows []row) {
	b.WriteString("| module | N | init: wall (s) / CPU (s) | apply: wall (s) / CPU (s) / peak RSS (MB) | no-op plan: wall (s) / CPU (s) / peak RSS (MB) | destroy: wall (s) / CPU (s) / peak RSS (MB) |\n|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		if !r.single.ran || r.start == "warm" {
			continue
		}
		s := r.single
		full := func(x step) string { return fmt.Sprintf("%s / %s / %.0f", secs(x.wall), secs(x.cpu), x.rss) }
		fmt.Fprintf(b, "| %s | %d | %s / %s | %s | %s | %s |\n", r.variant, r.n, secs(s.init.wall), secs(s.init.cpu), full(s.apply), full(s.plan), full(s.destroy))
	}
}

// table renders the results as Markdown.
func table(rows []row, o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Parallelism %d for all (the single workspace: -parallelism=%d); state in the cluster (kubernetes backend) for all; %s; %s. "+
		"A cold row starts from a fresh controller process with an empty work directory (no init, schema or provider process cached); a warm row sends N new claims to the same controller after the cold ones are deleted.\n\n",
		o.parallelism, o.parallelism, replicasText(o.replicas), time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "Every side ran `%s` (%s).\n\n", filepath.Base(rawBinary()), engine.TerraformEnv)
	if cores != nil {
		fmt.Fprintf(&b, "kube-apiserver, etcd and the bench ran on %d CPU(s), the controllers and every terraform process (all sides) on the other %d (-control-plane-cpus).\n\n",
			cores.plane.Count(), cores.work.Count())
	}
	if o.oneVersion {
		b.WriteString("Every kind was served at v1alpha1 alone (-one-version), none at v1beta1.\n\n")
	}
	if o.apiserverGates != "" {
		fmt.Fprintf(&b, "kube-apiserver ran with `--feature-gates=%s` (-apiserver-feature-gates); otherwise with its defaults.\n\n", o.apiserverGates)
	}
	if o.policies > 0 {
		fmt.Fprintf(&b, "Every Terraplane plan is checked against %d plan policies (bench/policies.go), which it passes.\n\n", o.policies)
	}
	headline(&b, rows)
	b.WriteString("\nThe single workspace: one root module calling the variant's module N times with `for_each`.\n\n")
	singleTable(&b, rows)
	b.WriteString("\n| module | N | controller | no-op reconcile (ms) | terraform processes in the no-op round | idle window | controller CPU while idle | terraform processes while idle |\n|---|---:|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		if !r.tp.ran() {
			continue
		}
		idle, idleCPU := none, none
		procs := none
		if r.tp.idle > 0 {
			idle = r.tp.idle.String()
			idleCPU = fmt.Sprintf("%.2f %% of a core", 100*r.tp.idleCPU.Seconds()/r.tp.idle.Seconds())
			procs = fmt.Sprintf("%.0f", r.tp.idleProcs)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %.0f | %s | %s | %s |\n", r.variant, r.n, r.start,
			float64(r.tp.noopAvg.Microseconds())/1000, r.tp.noopProcs, idle, idleCPU, procs)
	}
	b.WriteString("\n| module | N | controller | drift check (no-op plan) CPU per claim (s): Terraplane, the first after the creates → later ones / single / raw | peak RSS of the process tree (MB): Terraplane (controller, terraform, providers) / single (apply) / raw (terraform, providers) | drift checks of 1,000 claims every " + driftInterval.String() + " (cores): Terraplane / single / raw |\n|---|---:|---|---:|---:|---:|\n")
	for _, r := range rows {
		project := func(cpu time.Duration, ran bool) string {
			if !ran {
				return none
			}
			return fmt.Sprintf("%.2f", cpu.Seconds()/float64(r.n)*1000/driftInterval.Seconds())
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s → %s / %s / %s | %s / %s / %s | %s / %s / %s |\n", r.variant, r.n, r.start,
			perClaim(r.tp.firstDriftCPU, r.n, r.tp.firstDriftCPU > 0), perClaim(r.tp.driftCPU, r.n, r.tp.driftCPU > 0), perClaim(r.single.plan.cpu, r.n, r.single.ran), perClaim(r.raw.driftCPU, r.n, r.raw.driftCPU > 0),
			num0(r.tp.treeRSS, r.tp.ran()), num0(r.single.apply.rss, r.single.ran), num0(r.raw.treeRSS, r.raw.ran()),
			project(r.tp.driftCPU, r.tp.driftCPU > 0), project(r.single.plan.cpu, r.single.ran), project(r.raw.driftCPU, r.raw.driftCPU > 0))
	}
	fleetTable(&b, rows)
	runnerTable(&b, rows)
	wakeTable(&b, rows)
	killTable(&b, rows)
	return b.String()
}

// fleetTable renders what grows with the fleet: etcd's database and the time for one
// drift check of every claim; a raw side run on a sample says so.
func fleetTable(b *strings.Builder, rows []row) {
	b.WriteString("\n| module | N | controller | etcd database in use, growth per claim (KB) | CPU per claim (s): kube-apiserver / etcd | full drift sweep (s): Terraplane, the first after the creates → a later one / raw | raw side |\n|---|---:|---|---:|---:|---:|---|\n")
	for _, r := range rows {
		if !r.tp.ran() {
			continue
		}
		raw := "all N"
		switch {
		case !r.raw.ran():
			raw = none
		case r.raw.sampled > 0:
			raw = fmt.Sprintf("%d run, times and costs scaled by %d / %d", r.raw.sampled, r.n, r.raw.sampled)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %.1f | %s / %s | %s → %s / %s | %s |\n", r.variant, r.n, r.start, r.tp.etcdBytes/1024/float64(r.n),
			perClaimFine(r.tp.cpCPU-r.tp.etcdCPU, r.n), perClaimFine(r.tp.etcdCPU, r.n),
			num(r.tp.firstDriftWall.Seconds(), r.tp.firstDriftWall > 0), num(r.tp.driftWall.Seconds(), r.tp.driftWall > 0), num(r.raw.driftWall.Seconds(), r.raw.driftWall > 0), raw)
	}
}

// replicasText says how many controllers ran.
func replicasText(replicas int) string {
	if replicas == 1 {
		return "one controller"
	}
	return fmt.Sprintf("%d controller replicas sharing it, sharded (%d shards)", replicas, fleetShards)
}

// driftInterval is the controller's (its default): how often each claim is checked.
const driftInterval = 10 * time.Minute

func writeResults(o options, rows []row) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	md := "# Terraplane vs one hand-written workspace and raw terraform\n\n" + table(rows, o) + "\n![time to Ready](chart.png)\n"
	if err := os.WriteFile(filepath.Join(o.out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := writeChart(filepath.Join(o.out, "chart.png"), rows); err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(table(rows, o))
	fmt.Printf("\nwritten: %s, %s\n", filepath.Join(o.out, "results.md"), filepath.Join(o.out, "chart.png"))
	return nil
}
