package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
)

// timing is when each of N workspaces became ready, relative to the start: the first,
// the median and the last, and made, the one made first.
type timing struct{ first, median, last, made time.Duration }

// timingOf is the timing of ds, given in the order the workspaces were made.
func timingOf(ds []time.Duration) timing {
	made := ds[0]
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if os.Getenv("BENCH_VERBOSE") != "" {
		fmt.Println("    ready at:", ds)
	}
	return timing{first: ds[0], median: ds[len(ds)/2], last: ds[len(ds)-1], made: made}
}

// rawResult is the yardstick: plain terraform init + apply per workspace.
type rawResult struct {
	ready     timing
	cpCPU     time.Duration
	tfCPU     time.Duration
	processes int
	diskBytes int64
	treeRSS   float64       // peak of terraform and its providers together, MiB
	driftCPU  time.Duration // one no-op plan of every workspace
	driftWall time.Duration // how long those plans took, parallelism at a time
	sampled   int           // workspaces run when N was more than the sample (0: all N)
}

// rawDir is one raw workspace and the environment its terraform runs with.
type rawDir struct {
	dir string
	env []string
}

// tpResult is Terraplane's run.
type tpResult struct {
	ready     timing
	ctrlCPU   time.Duration
	cpCPU     time.Duration
	tfCPU     time.Duration
	processes float64
	diskBytes int64
	peakRSS   float64
	treeRSS   float64 // peak of the controller, terraform and providers together, MiB
	// firstDriftCPU and firstDriftWall are the first drift check of every claim after
	// the creates: terraform plans each, as no plan without changes came before.
	firstDriftCPU, firstDriftWall time.Duration
	driftCPU                      time.Duration // a later drift check of every claim: what each interval costs
	driftWall                     time.Duration // from asking every claim for that check to the last answer
	etcdBytes                     float64       // growth of etcd's database in use while the claims were made
	etcdCPU                       time.Duration // etcd's part of cpCPU
	reads                         float64
	writes                        float64
	audit                         map[write]int // with -audit: every writer's writes until all were Ready
	deletion                      time.Duration
	noopProcs                     float64
	noopAvg                       time.Duration
	idle                          time.Duration
	idleCPU                       time.Duration
	idleProcs                     float64
	runner                        runnerSide  // with runners: the runs sent to them while the claims were made
	wake                          wakeResult  // with runners, on the last pass: a claim after the runner stopped idle
	kill                          *killResult // with -kill-at: what a replica killed mid-run left behind
}

// runRaw creates n workspaces with the terraform CLI (init + apply, kubernetes backend),
// parallelism at a time. With sample below n, it creates sample of them and scales the
// times and costs by n / sample: parallelism at a time, the all-Ready time grows with
// the number of workspaces.
func (h *harness) runRaw(ctx context.Context, variant string, n, sample, parallelism int) (rawResult, error) {
	if sample <= 0 || sample >= n {
		return h.runRawAll(ctx, variant, n, parallelism)
	}
	res, err := h.runRawAll(ctx, variant, sample, parallelism)
	if err != nil {
		return rawResult{}, err
	}
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * float64(n) / float64(sample)) }
	res.ready.median, res.ready.last = scale(res.ready.median), scale(res.ready.last)
	res.cpCPU, res.tfCPU, res.driftCPU, res.driftWall = scale(res.cpCPU), scale(res.tfCPU), scale(res.driftCPU), scale(res.driftWall)
	res.processes = res.processes * n / sample
	res.sampled = sample
	return res, nil
}

// runRawAll is runRaw with a workspace for each of the n.
func (h *harness) runRawAll(ctx context.Context, variant string, n, parallelism int) (rawResult, error) {
	cfg, err := h.cliConfig()
	if err != nil {
		return rawResult{}, err
	}
	base := filepath.Join(h.work, "raw", fmt.Sprintf("%s-%d", variant, n))
	var mu sync.Mutex
	var res rawResult
	var firstErr error
	done := make([]time.Duration, 0, n)
	sem := make(chan struct{}, parallelism)
	var wg sync.WaitGroup
	cp0 := controlPlaneCPU()
	tree := sampleTree(rawTree(h.fleet.pids()))
	dirs := make([]rawDir, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir := filepath.Join(base, fmt.Sprint(i))
			name := fmt.Sprintf("raw%s%dn%d", strings.NewReplacer("_", "", "-", "").Replace(variant), n, i)
			env, err := h.rawFiles(dir, cfg, variant, name)
			var cpu time.Duration
			if err == nil {
				dirs[i] = rawDir{dir: dir, env: env}
				cpu, err = runTerraform(ctx, dirs[i], "init", "-input=false")
			}
			if err == nil {
				var apply time.Duration
				apply, err = runTerraform(ctx, dirs[i], "apply", "-auto-approve", "-input=false")
				cpu += apply
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			res.tfCPU += cpu
			res.processes += 2
			done = append(done, time.Since(start))
		}(i)
	}
	wg.Wait()
	res.treeRSS = tree.done()
	res.cpCPU = controlPlaneCPU() - cp0
	if firstErr != nil {
		return rawResult{}, firstErr
	}
	h.rawDirs[variant] = dirs
	if !h.noDrift {
		driftStart := time.Now()
		if res.driftCPU, err = rawDrift(ctx, dirs, parallelism); err != nil {
			return rawResult{}, err
		}
		res.driftWall = time.Since(driftStart)
	}
	res.ready = timingOf(done)
	res.diskBytes = dirSize(base) / int64(n)
	return res, nil
}

// cliConfig writes the yardsticks' CLI configuration: providers from the plugin mirror.
func (h *harness) cliConfig() (string, error) {
	cfg := filepath.Join(h.work, "cli.tfrc")
	err := os.WriteFile(cfg, []byte(`provider_installation { filesystem_mirror { path = "`+devenv.PluginMirror()+`" } }`+"\n"), 0o600)
	return cfg, err
}

// rawFiles writes a raw workspace: the variant's module, a kubernetes backend and the
// inputs; it returns the environment terraform needs beyond the CLI configuration.
func (h *harness) rawFiles(dir, cfg, variant, name string) ([]string, error) {
	backend := fmt.Sprintf(`terraform {
  backend "kubernetes" {
    secret_suffix = %q
    namespace     = %q
    config_path   = %q
  }
}
`, name, rawNS, h.cp.Kubeconfig)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	vars, _ := json.Marshal(map[string]string{"name": name})
	files := map[string]string{"main.tf": modules[variant], "terraform.tfvars.json": string(vars)}
	var env []string
	if variant == awsVariant {
		var err error
		if files, env, err = h.rawAWSFiles(dir, name); err != nil {
			return nil, err
		}
	}
	files["backend.tf"] = backend
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	return append(env, "TF_CLI_CONFIG_FILE="+cfg, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"), nil
}

// runTerraform runs one terraform command in a raw workspace and returns its CPU, its
// providers' included (terraform waits for them).
func runTerraform(ctx context.Context, w rawDir, args ...string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, rawBinary(), args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), w.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cores.start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil && !(args[0] == "plan" && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 2) {
		return 0, fmt.Errorf("raw terraform %s in %s: %w\n%s", args[0], w.dir, err, out.Bytes())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// rawBinary is what the raw and single sides run: the binary the controller finds
// ($TERRAPLANE_TERRAFORM, else terraform), found the same way; a binary not found is
// left to the first run's error.
var rawBinary = sync.OnceValue(func() string {
	path, err := engine.FindTerraform("")
	if err != nil {
		return "terraform"
	}
	return path
})

// rawDrift runs one no-op plan in every workspace, parallelism at a time: what a
// pipeline's drift check costs.
func rawDrift(ctx context.Context, dirs []rawDir, parallelism int) (time.Duration, error) {
	var mu sync.Mutex
	var total time.Duration
	var firstErr error
	sem := make(chan struct{}, parallelism)
	var wg sync.WaitGroup
	for _, d := range dirs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cpu, err := runTerraform(ctx, d, "plan", "-input=false", "-detailed-exitcode")
			mu.Lock()
			defer mu.Unlock()
			total += cpu
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	return total, firstErr
}

// runClaims creates n Bucket claims of the variant's class, waits until all are Ready,
// measures a no-op reconcile and (when idle > 0) an idle window, then deletes them
// (unless keep leaves them to the teardown). tag sets the claims of one pass apart from
// another's.
func (h *harness) runClaims(ctx context.Context, variant string, n int, tag string, idle time.Duration, keep bool) (tpResult, error) {
	f := h.fleet
	class := strings.ReplaceAll(variant, "_", "-")
	cpu0 := f.cpu()
	procs0 := f.processes()
	runner0 := f.runnerState()
	disk0 := dirsSize(f.workDirs())
	gets0 := h.fleet.metricSum("rest_client_requests_total", `method="GET"`)
	all0 := h.fleet.metricSum("rest_client_requests_total", "")
	byCode0 := h.fleet.writesByCode()
	reconciles0, reconcileSecs0 := h.fleet.reconcilesBy()
	api0 := h.apiServed(ctx)
	events0 := h.eventsByReason(ctx)
	names := make([]string, n)
	rw, err := h.watchReady(ctx)
	if err != nil {
		return tpResult{}, err
	}
	cp0, etcdCPU0 := controlPlaneCPU(), childCPU("etcd")
	etcd0 := h.etcdInUse()
	prov0 := f.providerCPU()
	tree := sampleTree(controllerTree(f.pids()))
	audit0 := h.audit.offset()
	start := time.Now()
	rw.begin(ctx, start)
	var killed chan error
	var kr killResult
	allReady := make(chan struct{})
	if h.killAt > 0 && len(f.cmds) > 1 {
		killed = make(chan error, 1)
		go func() { killed <- h.killMidway(ctx, rw, n, h.killAt, &kr, allReady) }()
	}
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d-%s%d", class, n, tag, i)
		b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: names[i]}}
		b.Spec.ClassRef = &common.LocalReference{Name: class}
		if err := h.c.Create(ctx, b); err != nil {
			return tpResult{}, fmt.Errorf("create claim: %w", err)
		}
	}
	ready, err := rw.wait(ctx, names)
	close(allReady)
	if err != nil {
		return tpResult{}, err
	}
	var res tpResult
	if killed != nil {
		if err := <-killed; err != nil {
			return tpResult{}, err
		}
		if err := h.leftovers(ctx, names, &kr); err != nil {
			return tpResult{}, err
		}
		res.kill = &kr
	}
	if res.audit, err = h.audit.since(audit0); err != nil {
		return tpResult{}, err
	}
	res.treeRSS = tree.done()
	res.cpCPU, res.etcdCPU = controlPlaneCPU()-cp0, childCPU("etcd")-etcdCPU0
	res.etcdBytes = h.etcdInUse() - etcd0
	res.ready = timingOf(ready)
	cpu1 := f.cpu()
	procs1 := f.processes()
	if f.targets != "" {
		res.runner = f.since(runner0)
	}
	// kept warm, provider processes are not yet in the controller's children's CPU
	res.ctrlCPU, res.tfCPU, res.processes = cpu1.self-cpu0.self, cpu1.children-cpu0.children+f.providerCPU()-prov0, procs1-procs0
	res.diskBytes = (dirsSize(f.workDirs()) - disk0) / int64(n)
	gets := h.fleet.metricSum("rest_client_requests_total", `method="GET"`) - gets0
	res.reads, res.writes = gets, h.fleet.metricSum("rest_client_requests_total", "")-all0-gets
	say("controller API writes per claim, by method and code: %s", growthPerClaim(h.fleet.writesByCode(), byCode0, n))
	api := h.apiServed(ctx)
	say("API server requests per claim, every client, by verb and resource: %s", growthPerClaim(api.requests, api0.requests, n))
	say("objects the API server went through per claim to answer LISTs, by resource and where it read them: %s", growthPerClaim(api.listed, api0.listed, n))
	say("the API server's checks of its watch caches against etcd, and caches built, in all: %s", growthPerClaim(api.cache, api0.cache, 1))
	say("events per claim, by type and reason: %s", growthPerClaim(h.eventsByReason(ctx), events0, n))
	reconciles, reconcileSecs := h.fleet.reconcilesBy()
	say("reconciles per claim, by controller: %s", growthPerClaim(reconciles, reconciles0, n))
	say("reconcile milliseconds per claim, by controller: %s", growthPerClaim(scaled(reconcileSecs, 1000), scaled(reconcileSecs0, 1000), n))
	if err := h.noop(ctx, names, &res); err != nil {
		return tpResult{}, err
	}
	if !h.noDrift {
		if res.firstDriftCPU, res.firstDriftWall, err = h.drift(ctx, names); err != nil {
			return tpResult{}, err
		}
		if res.driftCPU, res.driftWall, err = h.drift(ctx, names); err != nil {
			return tpResult{}, err
		}
	}
	if idle > 0 {
		say("idle for %s with %d Ready claims", idle, n)
		c0 := f.cpu()
		p0 := f.processes()
		time.Sleep(idle)
		c1 := f.cpu()
		p1 := f.processes()
		res.idle, res.idleCPU, res.idleProcs = idle, c1.self-c0.self, p1-p0
	}
	res.peakRSS = f.peakRSS()
	if keep {
		say("%d claims left to the teardown", n)
		return res, nil
	}
	start = time.Now()
	for _, name := range names {
		if err := h.c.Delete(ctx, &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name}}); err != nil {
			return tpResult{}, fmt.Errorf("delete claim: %w", err)
		}
	}
	if err := h.waitGone(ctx, names); err != nil {
		return tpResult{}, err
	}
	res.deletion = time.Since(start)
	return res, nil
}

// noop makes every Module of the run reconcile once with nothing changed, and records the
// terraform processes that started (should be none) and the average reconcile time.
func (h *harness) noop(ctx context.Context, names []string, res *tpResult) error {
	objs, err := h.managedOf(ctx, names)
	if err != nil {
		return err
	}
	label := fmt.Sprintf("controller=%q", objs[0].GetKind())
	sum0, _ := h.fleet.metric("controller_runtime_reconcile_time_seconds_sum", label)
	cnt0, _ := h.fleet.metric("controller_runtime_reconcile_time_seconds_count", label)
	p0 := h.fleet.processes()
	for _, u := range objs {
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"bench.terraplane.io/touched":%q}}}`, time.Now().Format(time.RFC3339Nano)))
		if err := h.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return err
		}
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		cnt, _ := h.fleet.metric("controller_runtime_reconcile_time_seconds_count", label)
		if cnt-cnt0 >= float64(len(names)) {
			sum, _ := h.fleet.metric("controller_runtime_reconcile_time_seconds_sum", label)
			p1 := h.fleet.processes()
			res.noopAvg = time.Duration((sum - sum0) / (cnt - cnt0) * float64(time.Second))
			res.noopProcs = p1 - p0
			return nil
		}
	}
	return fmt.Errorf("the no-op reconciles did not happen within a minute")
}

// waitGone waits until none of the claims is left.
func (h *harness) waitGone(ctx context.Context, names []string) error {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		list := &storagev1.BucketList{}
		if err := h.c.List(ctx, list, client.InNamespace(appNS)); err != nil {
			return err
		}
		left := 0
		for _, b := range list.Items {
			if want[b.Name] {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		time.Sleep(pollEvery(len(names)))
	}
	return fmt.Errorf("claims were not deleted within 30 minutes")
}

// growthPerClaim renders the growth of each count from before to now, per claim of n, the
// largest first ("PATCH 200 3.00, POST 201 3.00").
func growthPerClaim(now, before map[string]float64, n int) string {
	keys := make([]string, 0, len(now))
	for k := range now {
		if now[k] > before[k] {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(now[b]-before[b], now[a]-before[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.2f", k, (now[k]-before[k])/float64(n))
	}
	return strings.Join(parts, ", ")
}

// scaled is counts, each multiplied by factor.
func scaled(counts map[string]float64, factor float64) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, v := range counts {
		out[k] = v * factor
	}
	return out
}
