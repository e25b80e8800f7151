// Command bench measures Terraplane against what a Terraform user does by hand, side by
// side in one run: N claims of a kind whose module has one terraform_data resource, a
// variant with the random provider and one with the bundled S3 kind and the aws provider
// on a local MinIO. The yardsticks are one hand-written root module that calls the
// variant's module N times with for_each (the single workspace), and one workspace per
// claim (raw terraform); state in the cluster and the same parallelism for all. Every
// Terraplane row starts from a fresh controller process with an empty work directory
// (no init, schema or provider process cached): the cold row; the warm row sends N new
// claims to the same controller once the cold ones are gone. The runner side runs the
// same claims with terraform in a runner process per pool (--runner process), beside the
// in-process engine, and reports the hop's cost per run, the runner's RSS and the
// providers it evicted. One controller or several sharded replicas (-replicas); -policies
// installs plan policies that every plan is checked against. It writes a Markdown table
// and a PNG chart under bench/results/ and prints the table.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// The sides of a row.
const (
	sideRaw        = "raw"
	sideSingle     = "single"
	sideTerraplane = "terraplane"
	// sideRunner is Terraplane with terraform in a runner process per pool (--runner
	// process), beside the in-process engine of sideTerraplane.
	sideRunner = "runner"
)

type options struct {
	ns          []int
	parallelism int
	variants    []string
	sides       []string
	warm        bool
	idle        time.Duration
	out         string
	binary      string
	replicas    int
	ctrlArgs    []string
	// policies is how many plan policies (benchPolicies) every controller checks.
	policies int
	// rawSample caps the raw side's workspaces; a larger N scales the sample's times and
	// costs by N / rawSample (0: every claim gets its workspace).
	rawSample int
	// keepLast leaves the last pass's claims to the teardown: their deletion is not timed.
	keepLast bool
	// noDrift skips the drift sweep of every claim (minutes at 10,000).
	noDrift bool
	// audit logs the API server's writes and breaks each row's down (writes.md).
	audit bool
	// apiserverGates are kube-apiserver's feature gates (empty: its defaults).
	apiserverGates string
	// oneVersion serves every kind at v1alpha1 alone, as before some were also served at
	// v1beta1: the API server keeps a watch cache per served version.
	oneVersion bool
	// killAt, with replicas, kills one of them once this fraction of the claims is Ready.
	killAt float64
	// controlPlaneCPUs, when above 0, keeps the control plane on that many CPUs and
	// everything it serves on the rest (coreSplit).
	controlPlaneCPUs int
}

func main() {
	var o options
	ns := flag.String("n", "1,10,50", "comma-separated claim counts")
	variants := flag.String("variants", "terraform_data,random,aws-s3", "variants to run: terraform_data, random (ModuleClass claims), aws-s3 (the bundled S3 kind on MinIO, hashicorp/aws)")
	sides := flag.String("sides", "single,raw,terraplane,runner", "sides to run: single (one root module, for_each over the N), raw (one workspace each), terraplane (the in-process engine), runner (terraform in a runner process per pool, --runner process), pool (claims filled from a ResourcePool vs provisioned ones, written to pools.md)")
	flag.BoolVar(&o.warm, "warm", true, "after each cold Terraplane row, a warm one: N new claims to the same controller")
	flag.IntVar(&o.parallelism, "parallelism", 10, "concurrent terraform processes, for the controller and for raw terraform alike; -parallelism of the single workspace")
	flag.DurationVar(&o.idle, "idle", 60*time.Second, "idle window measured at the largest N")
	flag.StringVar(&o.out, "out", "bench/results", "directory for results.md and chart.png")
	flag.StringVar(&o.binary, "terraplane", "bin/terraplane", "the terraplane binary (make build)")
	flag.IntVar(&o.replicas, "replicas", 1, "controller replicas; more than one shards the managed resources between them, and they share the parallelism")
	flag.IntVar(&o.policies, "policies", 0, "plan policies to install before any row (at most 5, 10 rules in all; every plan passes them), so that every Terraplane plan is checked")
	flag.IntVar(&o.rawSample, "raw-sample", 0, "at most this many raw workspaces; a larger N runs this many and scales their times and costs by N / sample (0: all N)")
	flag.BoolVar(&o.keepLast, "keep-last", false, "leave the last pass's claims to the teardown instead of deleting them (their deletion is then not timed)")
	flag.BoolVar(&o.noDrift, "no-drift", false, "skip the drift sweep of every claim")
	flag.BoolVar(&o.oneVersion, "one-version", false, "serve every kind at v1alpha1 alone, stored as v1alpha1, to measure what serving the kinds users write most at v1beta1 as well costs the API server (a watch cache, a watch of etcd and a check per served version)")
	flag.StringVar(&o.apiserverGates, "apiserver-feature-gates", "", "kube-apiserver's --feature-gates for the bench's control plane, as Name=false,Other=true (empty: its defaults); results.md says which")
	flag.BoolVar(&o.audit, "audit", false, "log the API server's writes and write each Terraplane row's writes per claim, by writer, verb and object, to writes.md")
	flag.IntVar(&o.controlPlaneCPUs, "control-plane-cpus", 0, "keep kube-apiserver, etcd and the bench itself on this many CPUs, and the controllers and every terraform process on the rest, as on a cluster whose control plane has nodes of its own (0: no split)")
	flag.Float64Var(&o.killAt, "kill-at", 0, "with -replicas above 1: kill one replica (SIGKILL) once this fraction of a row's claims is Ready, and measure the takeover, duplicates and stuck state locks (0: none)")
	ctrlArgs := flag.String("controller-args", "", "extra arguments for every controller, space-separated (e.g. --debug)")
	flag.Parse()
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bad -n %q\n", s)
			os.Exit(2)
		}
		o.ns = append(o.ns, n)
	}
	o.variants = strings.Split(*variants, ",")
	o.sides = strings.Split(*sides, ",")
	for _, s := range o.sides {
		if !slices.Contains([]string{sideRaw, sideSingle, sideTerraplane, sideRunner, sidePool}, s) {
			fmt.Fprintf(os.Stderr, "bad -sides %q\n", s)
			os.Exit(2)
		}
	}
	o.ctrlArgs = strings.Fields(*ctrlArgs)
	var err error
	if cores, err = newCoreSplit(o.controlPlaneCPUs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctrllog.SetLogger(logr.Discard()) // the control plane's own logs are not the bench's
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	bin, err := filepath.Abs(o.binary)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s not found: run `make build` (make bench does)", bin)
	}
	h, err := newHarness(ctx, bin, o)
	if err != nil {
		return err
	}
	defer h.close()
	var rows []row
	var pools []poolResult
	tableSides := slices.ContainsFunc(o.sides, func(s string) bool { return s != sidePool })
	for _, variant := range o.variants {
		for i, n := range o.ns {
			last := i == len(o.ns)-1
			if tableSides {
				got, err := h.runRow(ctx, o, variant, n, last)
				if err != nil {
					return err
				}
				rows = append(rows, got...)
			}
			if slices.Contains(o.sides, sidePool) {
				got, err := h.runPool(ctx, variant, n)
				if err != nil {
					return err
				}
				pools = append(pools, got)
			}
		}
	}
	if len(pools) > 0 {
		if err := writePools(o, pools); err != nil {
			return err
		}
	}
	if !tableSides {
		return nil
	}
	if o.audit {
		if err := writeAudit(o, rows); err != nil {
			return err
		}
	}
	return writeResults(o, rows)
}

// runRow runs the sides of one (variant, N): the yardsticks, then Terraplane from a
// fresh controller, cold and (with -warm) warm, with the in-process engine and (the
// runner side) with a runner process per pool.
func (h *harness) runRow(ctx context.Context, o options, variant string, n int, last bool) ([]row, error) {
	r := row{variant: variant, n: n, start: none}
	var err error
	if slices.Contains(o.sides, sideSingle) {
		say("%s, N=%d: one workspace, for_each", variant, n)
		if r.single, err = h.runSingle(ctx, variant, n, o.parallelism); err != nil {
			return nil, err
		}
	}
	if slices.Contains(o.sides, sideRaw) {
		say("%s, N=%d: raw terraform, a workspace each", variant, n)
		if r.raw, err = h.runRaw(ctx, variant, n, o.rawSample, o.parallelism); err != nil {
			return nil, err
		}
	}
	var tp, rn []tpResult // cold, then warm
	if slices.Contains(o.sides, sideTerraplane) {
		if tp, err = h.runTerraplane(ctx, o, variant, n, last, false); err != nil {
			return nil, err
		}
	}
	if slices.Contains(o.sides, sideRunner) {
		if rn, err = h.runTerraplane(ctx, o, variant, n, false, true); err != nil {
			return nil, err
		}
	}
	if len(tp) == 0 && len(rn) == 0 {
		return []row{r}, nil
	}
	var rows []row
	for i, start := range []string{"cold", "warm"}[:max(len(tp), len(rn))] {
		w := r
		w.start = start
		if i < len(tp) {
			w.tp = tp[i]
		}
		if i < len(rn) {
			w.rn = rn[i]
		}
		rows = append(rows, w)
	}
	return rows, nil
}

// runTerraplane runs the claims on a fresh controller, cold and (with -warm) warm; with
// runners, terraform runs in a runner process per pool. The idle window is measured
// (at the largest N) with the in-process engine only.
func (h *harness) runTerraplane(ctx context.Context, o options, variant string, n int, last, runners bool) ([]tpResult, error) {
	name, what := fmt.Sprintf("%s-%d", variant, n), "terraplane"
	if runners {
		name, what = name+"-runner", "terraplane with a runner process per pool"
	}
	if err := h.startFleet(ctx, name, runners); err != nil {
		return nil, err
	}
	defer h.stopFleet()
	idle := func(pass bool) time.Duration {
		if last && pass {
			return o.idle
		}
		return 0
	}
	say("%s, N=%d: %s, cold controller", variant, n, what)
	keep := func(pass bool) bool { return o.keepLast && last && pass }
	cold, err := h.runClaims(ctx, variant, n, "c", idle(!o.warm), keep(!o.warm))
	if err != nil {
		return nil, err
	}
	out := []tpResult{cold}
	if o.warm {
		say("%s, N=%d: %s, warm controller", variant, n, what)
		warm, err := h.runClaims(ctx, variant, n, "w", idle(true), keep(true))
		if err != nil {
			return nil, err
		}
		out = append(out, warm)
	}
	if runners {
		if out[len(out)-1].wake, err = h.measureWake(ctx, variant); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func say(format string, args ...any) {
	fmt.Printf("==> %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
