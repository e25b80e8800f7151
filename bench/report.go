package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// row is one (variant, N) result.
type row struct {
	variant string
	n       int
	raw     rawResult
	tp      tpResult
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// table renders the results as Markdown.
func table(rows []row, o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Parallelism %d for both; state in the cluster (kubernetes backend) for both; %s; %s.\n\n", o.parallelism, replicasText(o.replicas), time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| module | N | raw terraform: all applied (s) | Terraplane Ready first / median / last (s) | ratio | controller CPU (s) | kube-apiserver + etcd CPU (s): Terraplane / raw | peak RSS (MB) | terraform CPU per claim (s): Terraplane / raw | terraform processes per claim: Terraplane / raw | disk per claim (KB): Terraplane / raw | controller API writes per claim | deletion (s) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		n := float64(r.n)
		fmt.Fprintf(&b, "| %s | %d | %s | %s / %s / %s | %.2f× | %.1f | %.1f / %.1f | %.0f | %.2f / %.2f | %.1f / %.1f | %.0f / %.0f | %.1f | %s |\n",
			r.variant, r.n, secs(r.raw.ready.last), secs(r.tp.ready.first), secs(r.tp.ready.median), secs(r.tp.ready.last),
			r.tp.ready.last.Seconds()/r.raw.ready.last.Seconds(), r.tp.ctrlCPU.Seconds(), r.tp.cpCPU.Seconds(), r.raw.cpCPU.Seconds(), r.tp.peakRSS,
			r.tp.tfCPU.Seconds()/n, r.raw.tfCPU.Seconds()/n, r.tp.processes/n, float64(r.raw.processes)/n,
			float64(r.tp.diskBytes)/1024, float64(r.raw.diskBytes)/1024, r.tp.writes/n, secs(r.tp.deletion))
	}
	b.WriteString("\n| module | N | no-op reconcile (ms) | terraform processes in the no-op round | idle window | controller CPU while idle | terraform processes while idle |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		idle, idleCPU := "—", "—"
		procs := "—"
		if r.tp.idle > 0 {
			idle = r.tp.idle.String()
			idleCPU = fmt.Sprintf("%.2f %% of a core", 100*r.tp.idleCPU.Seconds()/r.tp.idle.Seconds())
			procs = fmt.Sprintf("%.0f", r.tp.idleProcs)
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.0f | %s | %s | %s |\n", r.variant, r.n,
			float64(r.tp.noopAvg.Microseconds())/1000, r.tp.noopProcs, idle, idleCPU, procs)
	}
	b.WriteString("\n| module | N | drift check (no-op plan) CPU per claim (s): Terraplane / raw | peak RSS of the process tree (MB): Terraplane (controller, terraform, providers) / raw (terraform, providers) | drift checks of 1,000 claims every " + driftInterval.String() + " (cores): Terraplane / raw |\n|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		n := float64(r.n)
		project := func(cpu time.Duration) float64 { return cpu.Seconds() / n * 1000 / driftInterval.Seconds() }
		fmt.Fprintf(&b, "| %s | %d | %.2f / %.2f | %.0f / %.0f | %.2f / %.2f |\n", r.variant, r.n,
			r.tp.driftCPU.Seconds()/n, r.raw.driftCPU.Seconds()/n, r.tp.treeRSS, r.raw.treeRSS, project(r.tp.driftCPU), project(r.raw.driftCPU))
	}
	return b.String()
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
	md := "# Terraplane vs raw terraform\n\n" + table(rows, o) + "\n![time to Ready](chart.png)\n"
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
