package app

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// TestWithDefaults: zero options get their defaults; the container's limits are read only
// when the cap on terraform processes is left to them; sharding elects a leader.
func TestWithDefaults(t *testing.T) {
	twoCPUs := func() Limits { return Limits{CPUs: 2, Memory: 8 << 30} }
	cases := map[string]struct {
		in          Options
		want        Options
		readsLimits bool
	}{
		"all zero": {Options{}, Options{MaxConcurrentReconciles: 10, MetricsAddr: "0", HealthAddr: "0", Engine: engine.Options{MaxConcurrent: 4}}, true},
		"all set": {
			Options{MaxConcurrentReconciles: 3, MetricsAddr: ":8080", HealthAddr: ":8081", Engine: engine.Options{MaxConcurrent: 7}},
			Options{MaxConcurrentReconciles: 3, MetricsAddr: ":8080", HealthAddr: ":8081", Engine: engine.Options{MaxConcurrent: 7}}, false,
		},
		"negative reconciles": {Options{MaxConcurrentReconciles: -1, Engine: engine.Options{MaxConcurrent: 1}},
			Options{MaxConcurrentReconciles: 10, MetricsAddr: "0", HealthAddr: "0", Engine: engine.Options{MaxConcurrent: 1}}, false},
		"sharded": {Options{Shards: 4, Engine: engine.Options{MaxConcurrent: 1}},
			Options{Shards: 4, LeaderElection: true, MaxConcurrentReconciles: 10, MetricsAddr: "0", HealthAddr: "0", Engine: engine.Options{MaxConcurrent: 1}}, false},
		"leader election asked": {Options{LeaderElection: true, Engine: engine.Options{MaxConcurrent: 1}},
			Options{LeaderElection: true, MaxConcurrentReconciles: 10, MetricsAddr: "0", HealthAddr: "0", Engine: engine.Options{MaxConcurrent: 1}}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			read := false
			got := withDefaults(tc.in, func() Limits { read = true; return twoCPUs() })
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(engine.Options{}, "Log")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if read != tc.readsLimits {
				t.Errorf("limits read: %v, want %v", read, tc.readsLimits)
			}
		})
	}
}

// TestRestConfig: client-go's default rate limits are raised, set ones kept, and the
// caller's config is not changed.
func TestRestConfig(t *testing.T) {
	cases := map[string]struct {
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		"default":    {0, 0, 200, 400},
		"set":        {50, 60, 50, 60},
		"burst only": {0, 7, 200, 400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := &rest.Config{Host: "https://example", QPS: tc.qps, Burst: tc.burst}
			got := restConfig(in)
			if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst || got.Host != in.Host {
				t.Errorf("restConfig = QPS %v burst %d host %s, want %v, %d", got.QPS, got.Burst, got.Host, tc.wantQPS, tc.wantBurst)
			}
			if in.QPS != tc.qps || in.Burst != tc.burst {
				t.Error("the caller's config was changed")
			}
		})
	}
}

// TestManagerOptions: leader election, the Secret cache selector, the shutdown grace
// and the controller settings reach the manager.
func TestManagerOptions(t *testing.T) {
	scheme := runtime.NewScheme()
	o := managerOptions(Options{LeaderElection: true, LeaderElectionNamespace: "sys", HealthAddr: ":8081", MetricsAddr: ":8443", MetricsSecure: true}, scheme)
	if o.Scheme != scheme || !o.LeaderElection || o.LeaderElectionID != "terraplane-controller" || o.LeaderElectionNamespace != "sys" || !o.LeaderElectionReleaseOnCancel {
		t.Errorf("leader election: %+v", o)
	}
	if o.HealthProbeBindAddress != ":8081" || o.Metrics.BindAddress != ":8443" || !o.Metrics.SecureServing {
		t.Errorf("endpoints: health %q, metrics %+v", o.HealthProbeBindAddress, o.Metrics)
	}
	if o.GracefulShutdownTimeout == nil || *o.GracefulShutdownTimeout <= engine.DefaultGracePeriod {
		t.Errorf("shutdown timeout %v must outlast terraform's grace period %v", o.GracefulShutdownTimeout, engine.DefaultGracePeriod)
	}
	if c := o.Controller; c.UsePriorityQueue == nil || !*c.UsePriorityQueue || c.SkipNameValidation == nil || !*c.SkipNameValidation {
		t.Errorf("controller options: %+v", c)
	}
	var uncached []string
	for _, obj := range o.Client.Cache.DisableFor {
		uncached = append(uncached, fmt.Sprintf("%T", obj))
	}
	if diff := cmp.Diff([]string{"*v1.Secret", "*v1.ConfigMap"}, uncached); diff != "" {
		t.Errorf("kinds read through the API server (-want +got):\n%s", diff)
	}
}

// TestCacheOptions: Secrets are cached by label (state and plans left out), in the given
// namespaces only when there are some; Secrets and ConfigMaps lose their data on the way in.
func TestCacheOptions(t *testing.T) {
	cases := map[string]struct {
		namespaces []string
		want       []string
	}{
		"every namespace": {nil, nil},
		"two namespaces":  {[]string{"terraplane-system", "team-a"}, []string{"team-a", "terraplane-system"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := cacheOptions(tc.namespaces)
			var secrets, configMaps *cache.ByObject
			for obj, by := range o.ByObject {
				switch obj.(type) {
				case *corev1.Secret:
					secrets = &by
				case *corev1.ConfigMap:
					configMaps = &by
				}
			}
			if secrets == nil || configMaps == nil || len(o.ByObject) != 2 {
				t.Fatalf("cache: %+v; want settings for Secrets and ConfigMaps", o.ByObject)
			}
			if secrets.Label.String() != cachedSecrets.String() {
				t.Errorf("Secret selector %q, want %q", secrets.Label, cachedSecrets)
			}
			var got []string
			for ns := range secrets.Namespaces {
				got = append(got, ns)
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Secret namespaces (-want +got):\n%s", diff)
			}
			for kind, by := range map[string]*cache.ByObject{"Secret": secrets, "ConfigMap": configMaps} {
				if by.Transform == nil {
					t.Errorf("%ss enter the cache with their data", kind)
				}
			}
		})
	}
}

// TestWithoutData: Secrets and ConfigMaps lose their data and every object its managed
// fields; names and labels stay for the watches.
func TestWithoutData(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}
	kept := metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}}
	cases := map[string]struct {
		in, want any
	}{
		"secret": {&corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"k": []byte("v")}, StringData: map[string]string{"s": "v"}, Type: "Opaque"},
			&corev1.Secret{ObjectMeta: kept, Type: "Opaque"}},
		"config map": {&corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {1}}},
			&corev1.ConfigMap{ObjectMeta: kept}},
		"metadata only": {&metav1.PartialObjectMetadata{ObjectMeta: meta}, &metav1.PartialObjectMetadata{ObjectMeta: kept}},
		"another kind":  {&corev1.Namespace{ObjectMeta: meta}, &corev1.Namespace{ObjectMeta: kept}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := withoutData(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCachedSecrets: state Secrets and saved plans stay out of the cache; connection,
// credential and variable Secrets are in it.
func TestCachedSecrets(t *testing.T) {
	cases := map[string]struct {
		labels map[string]string
		cached bool
	}{
		"no labels":               {nil, true},
		"a connection secret":     {map[string]string{resource.ManagedLabel: "uid"}, true},
		"terraform state":         {map[string]string{"tfstate": "true", "tfstateSecretSuffix": "x"}, false},
		"tfstate label, not true": {map[string]string{"tfstate": "false"}, true},
		"a saved plan":            {map[string]string{resource.PlanLabel: "x"}, false},
		"a plan, empty label":     {map[string]string{resource.PlanLabel: ""}, false},
	}
	for name, tc := range cases {
		if got := cachedSecrets.Matches(labels.Set(tc.labels)); got != tc.cached {
			t.Errorf("%s: cached %v, want %v", name, got, tc.cached)
		}
	}
}

// TestMetricsOptions: secure serving puts authentication and authorization in front.
func TestMetricsOptions(t *testing.T) {
	plain := metricsOptions(":8080", false)
	if plain.BindAddress != ":8080" || plain.SecureServing || plain.FilterProvider != nil {
		t.Errorf("plain: %+v", plain)
	}
	secure := metricsOptions(":8443", true)
	if secure.BindAddress != ":8443" || !secure.SecureServing || secure.FilterProvider == nil {
		t.Errorf("secure: %+v", secure)
	}
}

// TestExecutable: the readiness check fails for a missing, non-executable or non-regular
// terraform binary.
func TestExecutable(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		path string
		ok   bool
	}{
		"executable":               {write("terraform", 0o755), true},
		"executable by owner only": {write("tf-owner", 0o700), true},
		"not executable":           {write("tf-plain", 0o644), false},
		"missing":                  {filepath.Join(dir, "absent"), false},
		"a directory":              {dir, false},
	}
	for name, tc := range cases {
		if err := executable(tc.path); (err == nil) != tc.ok {
			t.Errorf("%s: executable = %v, want ok %v", name, err, tc.ok)
		}
	}
}

// TestShardsOff: without shards no shard set is made (and no client either).
func TestShardsOff(t *testing.T) {
	set, err := shards(nil, nil, Options{})
	if set != nil || err != nil {
		t.Errorf("shards = %v, %v; want none", set, err)
	}
}

// probeManager records the checks a manager is given; its cache syncs when synced says.
type probeManager struct {
	ctrl.Manager
	health, ready map[string]healthz.Checker
	synced        bool
}

func (m *probeManager) AddHealthzCheck(name string, c healthz.Checker) error {
	m.health[name] = c
	return nil
}

func (m *probeManager) AddReadyzCheck(name string, c healthz.Checker) error {
	m.ready[name] = c
	return nil
}

func (m *probeManager) GetCache() cache.Cache { return syncCache{synced: m.synced} }

type syncCache struct {
	cache.Cache
	synced bool
}

func (c syncCache) WaitForCacheSync(context.Context) bool { return c.synced }

// TestProbes: /healthz always answers; /readyz fails until the caches have synced and
// while the engine's terraform binary is not there.
func TestProbes(t *testing.T) {
	req := httptest.NewRequest("GET", "/readyz", nil)
	for _, synced := range []bool{false, true} {
		m := &probeManager{health: map[string]healthz.Checker{}, ready: map[string]healthz.Checker{}, synced: synced}
		if err := addProbes(m, &engine.Engine{}); err != nil {
			t.Fatal(err)
		}
		if err := m.health["ping"](req); err != nil {
			t.Errorf("ping: %v", err)
		}
		if err := m.ready["caches"](req); (err == nil) != synced {
			t.Errorf("caches synced %v: check says %v", synced, err)
		}
		if err := m.ready["terraform"](req); err == nil {
			t.Error("an engine without a terraform binary is ready")
		}
	}
}
