package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
)

// Sharding settings of a fleet of several replicas.
const (
	fleetShards    = 12
	fleetNamespace = "terraplane-system"
)

// fleet is the controller processes the benchmark runs: one, or several sharded
// replicas that share the terraform parallelism. Its measures add up over the replicas,
// except peak RSS, which is the largest replica's.
type fleet struct {
	work    string
	cmds    []*exec.Cmd
	metrics []string
	logs    []string
	// targets, with runners (--runner process), is the file listing their metrics endpoints.
	targets string
	// deadCPU is what the replicas killed (-kill-at) had spent when they were killed.
	deadCPU cpu
}

// startFleet starts replicas controllers against kubeconfig, each with its own work
// directory under work, with extra arguments besides the bench's; with runners, each
// runs terraform in a runner process per pool.
func startFleet(bin, kubeconfig, work string, replicas, parallelism int, runners bool, extra []string) (*fleet, error) {
	f := &fleet{work: work}
	if runners {
		if err := os.MkdirAll(work, 0o755); err != nil {
			return f, err
		}
		f.targets = runnerTargets(work)
		extra = append(runnerArgs(f.targets), extra...)
	}
	perReplica := (parallelism + replicas - 1) / replicas
	for i := range replicas {
		port, err := devenv.FreePort()
		if err != nil {
			return f, err
		}
		args := []string{"controller", "--kubeconfig", kubeconfig, "--state-kubeconfig", kubeconfig,
			"--workdir", filepath.Join(work, fmt.Sprintf("workspaces-%d", i)), "--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-secure=false",
			"--health-probe-bind-address", "0", "--max-concurrent-terraform", strconv.Itoa(perReplica),
			"--max-concurrent-reconciles", strconv.Itoa(2 * perReplica)} // more workers than terraform slots keep the slots busy
		args = append(args, extra...)
		if replicas > 1 {
			args = append(args, "--shards", strconv.Itoa(fleetShards), "--shard-identity", fmt.Sprintf("replica-%d", i),
				"--leader-election-namespace", fleetNamespace)
		}
		cmd := exec.Command(bin, args...)
		logPath := filepath.Join(os.TempDir(), fmt.Sprintf("terraplane-bench-%s-%d.log", filepath.Base(work), i))
		if log, err := os.Create(logPath); err == nil {
			cmd.Stdout, cmd.Stderr = log, log
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := cores.start(cmd); err != nil {
			return f, fmt.Errorf("start controller: %w", err)
		}
		f.cmds = append(f.cmds, cmd)
		f.metrics = append(f.metrics, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		f.logs = append(f.logs, logPath)
	}
	return f, nil
}

// workDirs are the replicas' workspace directories, and their runners'.
func (f *fleet) workDirs() []string {
	out := make([]string, len(f.cmds))
	for i := range f.cmds {
		out[i] = filepath.Join(f.work, fmt.Sprintf("workspaces-%d", i))
	}
	return append(out, f.runnerWorkDirs()...)
}

// wait waits until every replica serves metrics, the claim and Module controllers have
// started their workers (their caches synced) and, sharded, every replica holds shards,
// so that the first measured run includes neither start-up nor the first rebalancing.
func (f *fleet) wait(ctx context.Context, c client.Client) error {
	started := func() bool {
		workers := map[string]int{}
		for i, logPath := range f.logs {
			if _, err := scrape(f.metrics[i], "terraplane_terraform_processes_total", ""); err != nil {
				return false
			}
			log, _ := os.ReadFile(logPath)
			for _, line := range strings.Split(string(log), "\n") {
				for _, ctrl := range []string{"Bucket", "Module"} {
					if strings.Contains(line, `"msg":"Starting workers"`) && strings.Contains(line, `"controller":"`+ctrl+`"`) {
						workers[ctrl]++
					}
				}
			}
		}
		return workers["Bucket"] == 1 && workers["Module"] == len(f.cmds) && f.balanced(ctx, c)
	}
	for deadline := time.Now().Add(2 * time.Minute); !started(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the controllers did not start within two minutes (see %s)", strings.Join(f.logs, ", "))
		}
	}
	return nil
}

// balanced reports whether every shard is held and each replica holds its share.
func (f *fleet) balanced(ctx context.Context, c client.Client) bool {
	if len(f.cmds) == 1 {
		return true
	}
	leases := &coordinationv1.LeaseList{}
	if err := c.List(ctx, leases, client.InNamespace(fleetNamespace)); err != nil {
		return false
	}
	held := map[string]int{}
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, "terraplane-shard-") {
			held[ptr.Deref(l.Spec.HolderIdentity, "")]++
		}
	}
	for i := range f.cmds {
		if held[fmt.Sprintf("replica-%d", i)] < fleetShards/len(f.cmds) {
			return false
		}
	}
	return true
}

// stop ends every replica.
func (f *fleet) stop() {
	for _, cmd := range f.cmds {
		if cmd.Process != nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_, _ = cmd.Process.Wait()
		}
	}
}

// pids are the replicas' process ids; none without a fleet.
func (f *fleet) pids() []int {
	if f == nil {
		return nil
	}
	out := make([]int, len(f.cmds))
	for i, cmd := range f.cmds {
		out[i] = cmd.Process.Pid
	}
	return out
}

// cpu is the replicas' CPU with their waited-for children's (terraform). A runner's own
// CPU counts as the controller's (the in-process engine's work), its waited-for
// children's as terraform's: they are not in the controller's until the runner exits.
func (f *fleet) cpu() cpu {
	total := f.deadCPU
	for _, pid := range append(f.pids(), f.runners(processes())...) {
		c, _ := procCPU(pid)
		total.self += c.self
		total.children += c.children
	}
	return total
}

// providerCPU is the CPU of the replicas' live provider processes.
func (f *fleet) providerCPU() time.Duration {
	var total time.Duration
	for _, pid := range f.pids() {
		total += providerCPU(pid)
	}
	return total
}

// peakRSS is the largest replica's high-water resident set, in MiB.
func (f *fleet) peakRSS() float64 {
	peak := 0.0
	for _, pid := range f.pids() {
		peak = max(peak, peakRSS(pid))
	}
	return peak
}

// metric adds up one sample of every replica's metrics; labels filters by a substring.
func (f *fleet) metric(name, labels string) (float64, error) {
	total := 0.0
	for _, url := range f.metrics {
		v, err := scrape(url, name, labels)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
}

// metricSum adds up every series of a metric whose line contains filter, over the replicas.
func (f *fleet) metricSum(name, filter string) float64 {
	total := 0.0
	for _, url := range f.metrics {
		total += scrapeSum(url, name, filter)
	}
	return total
}

// scrape reads one sample from a metrics endpoint; labels filters by a substring.
func scrape(url, name, labels string) (float64, error) {
	value := 0.0
	err := eachSample(url, func(line string) bool {
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != ' ' && line[len(name)] != '{') {
			return true
		}
		if labels != "" && !strings.Contains(line, labels) {
			return true
		}
		value = lastField(line)
		return false
	})
	return value, err
}

// scrapeSum adds up every series of a metric whose line contains filter.
func scrapeSum(url, name, filter string) float64 {
	sum := 0.0
	_ = eachSample(url, func(line string) bool {
		if strings.HasPrefix(line, name+"{") && strings.Contains(line, filter) {
			sum += lastField(line)
		}
		return true
	})
	return sum
}

// writesByCode is the controllers' API requests other than reads (rest_client_requests_total
// without method GET), summed over the fleet by method and response code ("PATCH 200").
func (f *fleet) writesByCode() map[string]float64 {
	by := map[string]float64{}
	for _, url := range f.metrics {
		_ = eachSample(url, func(line string) bool {
			if !strings.Contains(line, `method="GET"`) {
				addSeries(by, line, "rest_client_requests_total", func(line string) string { return label(line, "method") + " " + label(line, "code") })
			}
			return true
		})
	}
	return by
}

// reconcilesBy is each controller's reconciles (controller_runtime_reconcile_total, every
// result) and the seconds they took (controller_runtime_reconcile_time_seconds_sum),
// summed over the fleet by controller name.
func (f *fleet) reconcilesBy() (count, seconds map[string]float64) {
	count, seconds = map[string]float64{}, map[string]float64{}
	byController := func(line string) string { return label(line, "controller") }
	for _, url := range f.metrics {
		_ = eachSample(url, func(line string) bool {
			addSeries(count, line, "controller_runtime_reconcile_total", byController)
			addSeries(seconds, line, "controller_runtime_reconcile_time_seconds_sum", byController)
			return true
		})
	}
	return count, seconds
}

// addSeries adds line's value to by under key(line), when line is a sample of metric name.
func addSeries(by map[string]float64, line, name string, key func(line string) string) {
	if strings.HasPrefix(line, name+"{") {
		by[key(line)] += lastField(line)
	}
}

// label is the value of a sample line's label name ("" when it has none).
func label(line, name string) string {
	_, rest, ok := strings.Cut(line, "{"+name+`="`)
	if !ok {
		_, rest, ok = strings.Cut(line, ","+name+`="`)
	}
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// eachSample calls fn with every line of a metrics endpoint until fn returns false.
func eachSample(url string, fn func(line string) bool) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && fn(sc.Text()) {
	}
	return sc.Err()
}

// lastField is a sample line's value.
func lastField(line string) float64 {
	f := strings.Fields(line)
	v, _ := strconv.ParseFloat(f[len(f)-1], 64)
	return v
}
