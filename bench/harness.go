package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/kinds"
)

const (
	adminNS = "bench-admin"
	appNS   = "bench"
	rawNS   = "bench-raw"
)

// modules are the benchmark's module variants: one terraform_data, or random_id.
var modules = map[string]string{
	"terraform_data": `variable "name" { type = string }
resource "terraform_data" "this" { input = var.name }
output "id" { value = terraform_data.this.output }
`,
	"random": `terraform {
  required_providers {
    random = { source = "hashicorp/random", version = "3.9.0" }
  }
}
variable "name" { type = string }
resource "random_id" "this" {
  byte_length = 4
  keepers     = { name = var.name }
}
output "id" { value = "${var.name}-${random_id.this.hex}" }
`,
}

// harness is a control plane, and the controller running as its own processes while
// Terraplane's side of a row runs.
type harness struct {
	cp    *devenv.ControlPlane
	c     client.Client
	w     client.WithWatch
	fleet *fleet // nil between Terraplane's sides
	work  string
	minio *devenv.MinIO
	// bin, parallelism, replicas and ctrlArgs start the controllers.
	bin         string
	parallelism int
	replicas    int
	ctrlArgs    []string
	noDrift     bool      // no drift sweeps
	killAt      float64   // with replicas: kill one once this fraction of the claims is Ready
	audit       *auditLog // with -audit: the API server's log of writes
	// rawDirs are the raw side's workspaces of the last run, per variant, for its drift checks.
	rawDirs map[string][]rawDir
}

func newHarness(ctx context.Context, bin string, o options) (*harness, error) {
	work, err := os.MkdirTemp("", "terraplane-bench-")
	if err != nil {
		return nil, err
	}
	h := &harness{work: work, rawDirs: map[string][]rawDir{}, bin: bin, parallelism: o.parallelism, replicas: o.replicas, ctrlArgs: o.ctrlArgs, noDrift: o.noDrift, killAt: o.killAt}
	cpo := devenv.ControlPlaneOptions{Kubeconfig: filepath.Join(work, "kubeconfig"), FeatureGates: o.apiserverGates}
	if o.oneVersion {
		cpo.EditCRD = servedAtAlphaOnly
	}
	if o.audit {
		h.audit = &auditLog{path: filepath.Join(work, "audit.log")}
		cpo.AuditLog = h.audit.path
	}
	if h.cp, err = devenv.StartControlPlaneWith(cpo); err != nil {
		return nil, err
	}
	if err := cores.pinPlane(); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(h.cp.Config)
	cfg.QPS = -1 // no client-side throttling: the benchmark must not slow its own claims down
	if h.w, err = client.NewWithWatch(cfg, client.Options{Scheme: kinds.NewScheme()}); err != nil {
		return nil, err
	}
	h.c = h.w
	if err := h.setup(ctx); err != nil {
		return nil, err
	}
	if err := h.installPolicies(ctx, o.policies); err != nil {
		return nil, err
	}
	if slices.Contains(o.variants, awsVariant) {
		if err := h.startMinIO(ctx); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// startFleet starts fresh controllers (with runners: terraform in a runner process per
// pool), each with a work directory of its own under a new directory named for the row:
// no init, schema or provider process is cached. It returns once their workers run.
func (h *harness) startFleet(ctx context.Context, row string, runners bool) error {
	f, err := startFleet(h.bin, h.cp.Kubeconfig, filepath.Join(h.work, "controller-"+row), h.replicas, h.parallelism, runners, h.ctrlArgs)
	h.fleet = f
	if err != nil {
		return err
	}
	return f.wait(ctx, h.c)
}

// stopFleet stops the controllers; their provider processes end with them.
func (h *harness) stopFleet() {
	if h.fleet != nil {
		h.fleet.stop()
		h.fleet = nil
	}
}

func (h *harness) close() {
	h.stopFleet()
	if h.cp != nil {
		h.cp.Stop()
	}
	if h.minio != nil {
		h.minio.Stop()
	}
	_ = os.RemoveAll(h.work)
}

// setup creates the namespaces, a random ProviderConfig, and per variant a ConfigMap
// module, a ModuleClass and a BucketClass.
func (h *harness) setup(ctx context.Context) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: adminNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rawNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleetNamespace}},
		&terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "random"},
			Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}},
	}
	for variant, src := range modules {
		name := strings.ReplaceAll(variant, "_", "-")
		class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name}, AllowedNamespaces: &common.AllowedNamespaces{Names: []string{appNS}}}
		class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
		class.SpecTemplate.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: name}
		class.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}}
		class.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte("{}")}
		if variant == "random" {
			class.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
		}
		objs = append(objs,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name}, Data: map[string]string{"main.tf": src}},
			class,
			&storagev1.BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name},
				ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: name, Namespace: adminNS}})
	}
	for _, o := range objs {
		if err := h.c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// cpu is a process's own and its waited-for children's CPU time, from /proc.
type cpu struct{ self, children time.Duration }

func procCPU(pid int) (cpu, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpu{}, err
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	tick := func(i int) time.Duration {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(v) * time.Second / 100
	}
	// Fields after the name: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
	return cpu{self: tick(11) + tick(12), children: tick(13) + tick(14)}, nil
}

// controlPlaneCPU is the CPU kube-apiserver and etcd have used so far.
func controlPlaneCPU() time.Duration { return childCPU("kube-apiserver", "etcd") }

// childCPU is the CPU this process's children named comms have used so far.
func childCPU(comms ...string) time.Duration {
	var total time.Duration
	for _, p := range processes() {
		if p.ppid != os.Getpid() || !slices.Contains(comms, p.comm) {
			continue
		}
		if c, err := procCPU(p.pid); err == nil {
			total += c.self
		}
	}
	return total
}

// etcdInUse is the part of etcd's database in use, in bytes (0 when etcd does not say).
func (h *harness) etcdInUse() float64 {
	v, _ := scrape(h.cp.EtcdMetricsURL(), "etcd_mvcc_db_total_size_in_use_in_bytes", "")
	return v
}

// apiCounts is what the API server counts of its own work, from every client: see
// apiServed.
type apiCounts struct {
	// requests by verb and resource: "LIST secrets", "PATCH buckets/status".
	requests map[string]float64
	// listed is the objects it went through to answer LISTs, by resource and where they
	// were read: "secrets from the watch cache", "buckets.storage.terraplane.io from etcd".
	listed map[string]float64
	// cache is its checks of each resource's watch cache against etcd, by outcome
	// ("buckets.storage.terraplane.io checked, success"), and each cache built from a
	// LIST of etcd ("secrets cache built"): a failed check drops the cache, which is
	// built again.
	cache map[string]float64
}

// apiServed is what the API server counts of the requests it served, from every client
// (apiserver_request_total), of the objects it went through to answer LISTs
// (apiserver_storage_list_fetched_objects_total: a LIST with a label selector goes
// through every object of its namespace, whatever it returns, and so does the API
// server's own check of its watch cache), and of that check's outcomes.
func (h *harness) apiServed(ctx context.Context) apiCounts {
	a := newAPICounts()
	cs, err := kubernetes.NewForConfig(h.cp.Config)
	if err != nil {
		return a
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return a
	}
	for _, line := range strings.Split(string(raw), "\n") {
		a.add(line)
	}
	return a
}

// newAPICounts is a count of nothing yet.
func newAPICounts() apiCounts {
	return apiCounts{requests: map[string]float64{}, listed: map[string]float64{}, cache: map[string]float64{}}
}

// add counts one sample line of the API server's metrics.
func (a apiCounts) add(line string) {
	addSeries(a.requests, line, "apiserver_request_total", verbAndResource)
	addSeries(a.listed, line, "apiserver_storage_list_fetched_objects_total", byResourceAndStorage)
	addSeries(a.cache, line, "apiserver_storage_consistency_checks_total", func(line string) string {
		return groupResource(line) + " checked, " + label(line, "status")
	})
	addSeries(a.cache, line, "apiserver_watch_cache_initializations_total", func(line string) string {
		return groupResource(line) + " cache built"
	})
}

// groupResource names a sample by its resource and API group, as kubectl does:
// "buckets.storage.terraplane.io", "secrets".
func groupResource(line string) string {
	if g := label(line, "group"); g != "" {
		return label(line, "resource") + "." + g
	}
	return label(line, "resource")
}

// eventsByReason counts the events recorded in every namespace (the claims' and their
// class's) by type and reason ("Normal Applied"), a repeated event once per time it
// happened (its series).
func (h *harness) eventsByReason(ctx context.Context) map[string]float64 {
	by := map[string]float64{}
	list := &eventsv1.EventList{}
	if err := h.c.List(ctx, list); err != nil {
		return by
	}
	for _, e := range list.Items {
		times := 1.0
		if e.Series != nil && e.Series.Count > 1 {
			times = float64(e.Series.Count)
		}
		by[e.Type+" "+e.Reason] += times
	}
	return by
}

// byResourceAndStorage names a sample by its resource and where it was read: "secrets
// from the watch cache", "buckets.storage.terraplane.io from etcd".
func byResourceAndStorage(line string) string {
	from := label(line, "storage")
	if from == "watchcache" {
		from = "the watch cache"
	}
	return groupResource(line) + " from " + from
}

// verbAndResource names a sample of apiserver_request_total: "LIST secrets",
// "PATCH buckets/status".
func verbAndResource(line string) string {
	key := label(line, "verb") + " " + label(line, "resource")
	if sub := label(line, "subresource"); sub != "" {
		key += "/" + sub
	}
	return key
}

// peakRSS is a process's high-water resident set, in MiB.
func peakRSS(pid int) float64 { return statusMiB(pid, "VmHWM:") }

// dirsSize is the disk the directory trees take together.
func dirsSize(dirs []string) int64 {
	var total int64
	for _, d := range dirs {
		total += dirSize(d)
	}
	return total
}

// dirSize is the disk a directory tree takes (file sizes; symlinks count as links).
func dirSize(dir string) int64 {
	var total int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		return nil
	})
	return total
}

// servedAtAlphaOnly keeps a CRD's v1alpha1 version alone, served and stored: the
// controller and the bench read and write v1alpha1.
func servedAtAlphaOnly(c *apiextensionsv1.CustomResourceDefinition) {
	c.Spec.Versions = slices.DeleteFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name != "v1alpha1" })
	for i := range c.Spec.Versions {
		c.Spec.Versions[i].Served, c.Spec.Versions[i].Storage = true, true
	}
}
