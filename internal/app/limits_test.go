package app

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestReadLimits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  Limits
	}{
		{"v2 limits", map[string]string{"cpu.max": "150000 100000\n", "memory.max": "1073741824\n"}, Limits{CPUs: 1.5, Memory: 1 << 30}},
		{"v2 no limits", map[string]string{"cpu.max": "max 100000\n", "memory.max": "max\n"}, Limits{}},
		{"v1 limits", map[string]string{"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n",
			"memory/memory.limit_in_bytes": "2147483648\n"}, Limits{CPUs: 2, Memory: 2 << 30}},
		{"v1 no limits", map[string]string{"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n",
			"memory/memory.limit_in_bytes": "9223372036854771712\n"}, Limits{}},
		{"no cgroup files", nil, Limits{}},
		{"garbage", map[string]string{"cpu.max": "lots\n", "memory.max": "plenty\n"}, Limits{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readLimits(writeFiles(t, tc.files), nil); got != tc.want {
				t.Errorf("ReadLimits = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestReadLimitsOwnCgroup reads the limits of the process's own cgroup, named in
// /proc/self/cgroup, rather than those of the hierarchy's root.
func TestReadLimitsOwnCgroup(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n",
		"cpu/pods/p1/cpu.cfs_quota_us": "50000\n", "cpu/pods/p1/cpu.cfs_period_us": "100000\n",
		"memory/memory.limit_in_bytes": "9223372036854771712\n", "memory/pods/p1/memory.limit_in_bytes": "536870912\n",
	})
	procCgroup := writeFiles(t, map[string]string{"cgroup": "5:memory:/pods/p1\n2:cpu,cpuacct:/pods/p1\n0::/\n"})
	own := ownCgroups(filepath.Join(procCgroup, "cgroup"))
	if got, want := readLimits(root, own), (Limits{CPUs: 0.5, Memory: 512 << 20}); got != want {
		t.Errorf("readLimits = %+v, want %+v", got, want)
	}
	// A path that does not exist under root (a container's view) falls back to the root.
	if got, want := readLimits(root, map[string]string{"cpu": "/elsewhere", "memory": "/elsewhere"}), (Limits{}); got != want {
		t.Errorf("readLimits = %+v, want %+v", got, want)
	}
}

func TestDefaultMaxConcurrentTerraform(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits Limits
		want   int
	}{
		{"1Gi and 1 CPU: memory decides", Limits{CPUs: 1, Memory: 1 << 30}, 1},
		{"4Gi and 1 CPU: CPU decides", Limits{CPUs: 1, Memory: 4 << 30}, 2},
		{"half a CPU, no memory limit", Limits{CPUs: 0.5}, 1},
		{"3 CPUs and 2Gi", Limits{CPUs: 3, Memory: 2 << 30}, 3},
		{"tiny memory limit still runs one", Limits{CPUs: 4, Memory: 128 << 20}, 1},
		{"no limits: the machine's CPUs", Limits{}, 2 * runtime.NumCPU()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := DefaultMaxConcurrentTerraform(tc.limits)
			if got != tc.want {
				t.Errorf("DefaultMaxConcurrentTerraform(%+v) = %d (%s), want %d", tc.limits, got, why, tc.want)
			}
			if why == "" {
				t.Error("no reason given")
			}
		})
	}
}

// TestOwnCgroups: each hierarchy's controllers map to the process's cgroup in it, the
// unified hierarchy under ""; malformed lines are skipped; no file gives nothing.
func TestOwnCgroups(t *testing.T) {
	cases := map[string]struct {
		content string
		want    map[string]string
	}{
		"v2":                 {"0::/kubepods/pod1/c1\n", map[string]string{"": "/kubepods/pod1/c1"}},
		"v1":                 {"12:memory:/pods/p\n4:cpu,cpuacct:/pods/q\n1:name=systemd:/x\n", map[string]string{"memory": "/pods/p", "cpu": "/pods/q", "cpuacct": "/pods/q", "name=systemd": "/x"}},
		"a path with colons": {"0::/a:b\n", map[string]string{"": "/a:b"}},
		"malformed":          {"garbage\n3:cpu\n", map[string]string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"cgroup": tc.content})
			if diff := cmp.Diff(tc.want, ownCgroups(filepath.Join(dir, "cgroup"))); diff != "" {
				t.Errorf("ownCgroups (-want +got):\n%s", diff)
			}
		})
	}
	if got := ownCgroups(filepath.Join(t.TempDir(), "absent")); got != nil {
		t.Errorf("no file: %v", got)
	}
}

// TestReadPairAndInt: cgroup values, "max" as no limit, anything else refused.
func TestReadPairAndInt(t *testing.T) {
	pairs := map[string]struct {
		quota, period int64
		ok            bool
	}{
		"50000 100000\n": {50000, 100000, true},
		"max 100000\n":   {0, 100000, true},
		"50000\n":        {0, 0, false},
		"x 100000\n":     {0, 0, false},
		"50000 y\n":      {0, 0, false},
	}
	for content, want := range pairs {
		q, p, ok := readPair(filepath.Join(writeFiles(t, map[string]string{"f": content}), "f"))
		if q != want.quota || p != want.period || ok != want.ok {
			t.Errorf("readPair(%q) = %d %d %v, want %d %d %v", content, q, p, ok, want.quota, want.period, want.ok)
		}
	}
	ints := map[string]struct {
		v  int64
		ok bool
	}{"1024\n": {1024, true}, "max\n": {0, true}, "-1\n": {-1, true}, "lots\n": {0, false}}
	for content, want := range ints {
		v, ok := readInt(filepath.Join(writeFiles(t, map[string]string{"f": content}), "f"))
		if v != want.v || ok != want.ok {
			t.Errorf("readInt(%q) = %d %v, want %d %v", content, v, ok, want.v, want.ok)
		}
	}
	if _, _, ok := readPair("/nonexistent/cpu.max"); ok {
		t.Error("readPair of a missing file")
	}
	for _, tc := range []struct {
		quota, period int64
		want          float64
	}{{150000, 100000, 1.5}, {-1, 100000, 0}, {100000, 0, 0}} {
		if got := quotaCPUs(tc.quota, tc.period); got != tc.want {
			t.Errorf("quotaCPUs(%d, %d) = %g, want %g", tc.quota, tc.period, got, tc.want)
		}
	}
}

// TestCPUUsed reads the CPU a cgroup used: v2's usage_usec, else v1's cpuacct.usage,
// else nothing.
func TestCPUUsed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  float64
		ok    bool
	}{
		{"v2", map[string]string{"cpu.stat": "usage_usec 2500000\nuser_usec 2000000\n"}, 2.5, true},
		{"v1", map[string]string{"cpuacct/cpuacct.usage": "3000000000\n"}, 3, true},
		{"v2 without usage", map[string]string{"cpu.stat": "nr_periods 0\n"}, 0, false},
		{"none", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cpuUsed(writeFiles(t, tc.files), nil)()
			if got != tc.want || ok != tc.ok {
				t.Errorf("cpuUsed = %v, %t; want %v, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}
