package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// runnerSide is what the runner side (--runner process) measures beyond Terraplane's
// usual figures: the runs sent to the pool's runner, their hop, and the runner itself.
type runnerSide struct {
	runs    float64       // runs sent to runners
	hop     time.Duration // time on the way to the runner and back, over every run
	rss     float64       // the runners' peak resident set, MiB (their providers' apart)
	evicted float64       // warm provider processes the runners retired
}

// hopPerRun is the average hop of a run, in milliseconds.
func (r runnerSide) hopPerRun() float64 {
	if r.runs == 0 {
		return 0
	}
	return float64(r.hop.Microseconds()) / 1000 / r.runs
}

// runnerArgs are the controller's arguments of the runner side: a runner process per
// pool, whose metrics endpoints it lists in targets, stopped once idle for wakeIdleTTL.
func runnerArgs(targets string) []string {
	return []string{"--runner", "process", "--runner-metrics-targets", targets, "--runner-idle-ttl", wakeIdleTTL.String()}
}

// target is one runner's metrics endpoint, as the controller lists it.
type target struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// runnerURLs are the metrics URLs of the fleet's runners (none without runners).
func (f *fleet) runnerURLs() []string {
	if f.targets == "" {
		return nil
	}
	raw, err := os.ReadFile(f.targets)
	if err != nil {
		return nil
	}
	var ts []target
	if json.Unmarshal(raw, &ts) != nil {
		return nil
	}
	var out []string
	for _, t := range ts {
		for _, addr := range t.Targets {
			out = append(out, "http://"+addr+"/metrics")
		}
	}
	return out
}

// runnerSum adds up every series of a runner metric whose line contains filter, over
// the fleet's runners.
func (f *fleet) runnerSum(name, filter string) float64 {
	total := 0.0
	for _, url := range f.runnerURLs() {
		total += scrapeSum(url, name, filter)
	}
	return total
}

// processes are the terraform processes the fleet started: its controllers' and, with
// runners, theirs.
func (f *fleet) processes() float64 {
	v, _ := f.metric("terraplane_terraform_processes_total", "")
	return v + f.runnerSum("terraplane_terraform_processes_total", "")
}

// runners are the fleet's runner processes: its controllers' children that run the
// terraplane binary.
func (f *fleet) runners(all []proc) []int {
	if f == nil || f.targets == "" {
		return nil
	}
	var out []int
	for _, ctrl := range f.pids() {
		for _, p := range descendants(all, ctrl) {
			if p.comm == "terraplane" {
				out = append(out, p.pid)
			}
		}
	}
	return out
}

// runnerWorkDirs are the runners' work directories (their --workdir).
func (f *fleet) runnerWorkDirs() []string {
	var out []string
	for _, pid := range f.runners(processes()) {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(raw, "\x00")), "\x00")
		for i, a := range args {
			if a == "--workdir" && i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
	}
	return out
}

// runnerState is what the runner side measures at one moment; a pass's figures are the
// difference of two.
type runnerState struct {
	runs, hopSeconds, evicted float64
}

func (f *fleet) runnerState() runnerState {
	return runnerState{runs: f.metricSum("terraplane_runner_runs_total", ""), hopSeconds: f.metricSum("terraplane_runner_hop_seconds_sum", ""),
		evicted: f.runnerSum("terraplane_provider_pool_evictions_total", "")}
}

// since is the runner side of a pass that started at s0, with the runners' peak RSS.
func (f *fleet) since(s0 runnerState) runnerSide {
	s1 := f.runnerState()
	rss := 0.0
	for _, pid := range f.runners(processes()) {
		rss += peakRSS(pid)
	}
	return runnerSide{runs: s1.runs - s0.runs, hop: time.Duration((s1.hopSeconds - s0.hopSeconds) * float64(time.Second)),
		evicted: s1.evicted - s0.evicted, rss: rss}
}

// runnerTable renders the runner side beside Terraplane's in-process engine, row by row
// of the same (variant, N, cold or warm), measured in the same run.
func runnerTable(b *strings.Builder, rows []row) {
	if !slices.ContainsFunc(rows, func(r row) bool { return r.rn.ran() }) {
		return
	}
	b.WriteString("\nRunner pools: the same claims with `--runner process` (a runner process for the pool, terraform and its warm providers in it), beside the in-process engine of the rows above.\n\n")
	b.WriteString("| module | N | controller | all Ready (s): in-process / runner | ratio runner / in-process | median Ready (s): in-process / runner | hop per run (ms) | runs sent per claim | terraform CPU per claim (s): in-process / runner | runner peak RSS (MB) | providers evicted | peak RSS of the process tree (MB): in-process / runner |\n")
	b.WriteString("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		if !r.rn.ran() {
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s / %s | %s | %s / %s | %.2f | %.1f | %s / %s | %.0f | %.0f | %s / %s |\n",
			r.variant, r.n, r.start, num(r.tp.ready.last.Seconds(), r.tp.ran()), num(r.rn.ready.last.Seconds(), true),
			ratio(r.rn.ready.last, r.tp.ready.last), num(r.tp.ready.median.Seconds(), r.tp.ran()), num(r.rn.ready.median.Seconds(), true),
			r.rn.runner.hopPerRun(), r.rn.runner.runs/float64(r.n), perClaim(r.tp.tfCPU, r.n, r.tp.ran()), perClaim(r.rn.tfCPU, r.n, true),
			r.rn.runner.rss, r.rn.runner.evicted, num0(r.tp.treeRSS, r.tp.ran()), num0(r.rn.treeRSS, true))
	}
}

// runnerTargets is where the runner side's controllers list their runners.
func runnerTargets(work string) string { return filepath.Join(work, "runner-targets.json") }
