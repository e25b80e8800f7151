package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRatio: a ratio needs both sides; a side that did not run shows as none.
func TestRatio(t *testing.T) {
	cases := []struct {
		name string
		a, b time.Duration
		want string
	}{
		{"faster than the yardstick", 10 * time.Second, 40 * time.Second, "0.25×"},
		{"slower", 30 * time.Second, 20 * time.Second, "1.50×"},
		{"the yardstick did not run", 10 * time.Second, 0, none},
		{"Terraplane did not run", 0, 20 * time.Second, none},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ratio(tc.a, tc.b); got != tc.want {
				t.Errorf("ratio = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPerClaim: CPU per claim divides by N, and a side that did not run shows as none.
func TestPerClaim(t *testing.T) {
	cases := []struct {
		name string
		d    time.Duration
		n    int
		ran  bool
		want string
	}{
		{"divided by N", 5 * time.Second, 10, true, "0.50"},
		{"one claim", 1250 * time.Millisecond, 1, true, "1.25"},
		{"not run", 5 * time.Second, 10, false, none},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := perClaim(tc.d, tc.n, tc.ran); got != tc.want {
				t.Errorf("perClaim = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFleetTable: the fleet's table splits the control plane's CPU per claim between
// kube-apiserver and etcd, to the ten-thousandth, on the rows Terraplane's side ran.
func TestFleetTable(t *testing.T) {
	tp := tpResult{ready: timing{last: time.Second}, cpCPU: 30 * time.Second, etcdCPU: 5 * time.Second, etcdBytes: 2048 * 100}
	var b strings.Builder
	fleetTable(&b, []row{{variant: "terraform_data", n: 100, start: "cold", tp: tp}, {variant: "terraform_data", n: 10, start: "warm"}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header, its rule and one row:\n%s", b.String())
	}
	if want := "| terraform_data | 100 | cold | 2.0 | 0.2500 / 0.0500 |"; !strings.HasPrefix(lines[2], want) {
		t.Errorf("row %q, want it to begin %q", lines[2], want)
	}
}

// TestSingleTable: the single workspace's own table has one line per (variant, N): the
// cold row's, not the warm one that shares its yardstick, and none without that side.
func TestSingleTable(t *testing.T) {
	single := singleResult{ran: true, init: step{wall: time.Second}, apply: step{wall: 2 * time.Second, cpu: 3 * time.Second, rss: 400}}
	rows := []row{
		{variant: "aws-s3", n: 10, start: "cold", single: single},
		{variant: "aws-s3", n: 10, start: "warm", single: single},
		{variant: "random", n: 10, start: "cold"},
	}
	var b strings.Builder
	singleTable(&b, rows)
	var got []string
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| aws-s3") || strings.HasPrefix(line, "| random") {
			got = append(got, strings.Fields(line)[1])
		}
	}
	if diff := cmp.Diff([]string{"aws-s3"}, got); diff != "" {
		t.Errorf("rows of the single workspace's table (-want +got):\n%s", diff)
	}
	if single.applied() != 3*time.Second {
		t.Errorf("applied = %s, want init and apply together (3s)", single.applied())
	}
}

// TestRunnerTable: the runner side's table has a line per row where it ran, beside the
// in-process engine of the same row: the ratio of their all-Ready times, the hop per run
// in milliseconds, runs per claim, the runner's RSS and the providers it evicted; there
// is no table when it did not run.
func TestRunnerTable(t *testing.T) {
	inProcess := tpResult{ready: timing{median: 2 * time.Second, last: 4 * time.Second}, tfCPU: 10 * time.Second}
	runner := tpResult{ready: timing{median: 3 * time.Second, last: 5 * time.Second}, tfCPU: 12 * time.Second,
		runner: runnerSide{runs: 20, hop: 50 * time.Millisecond, rss: 71.4, evicted: 1}}
	rows := []row{
		{variant: "terraform_data", n: 10, start: "cold", tp: inProcess, rn: runner},
		{variant: "terraform_data", n: 10, start: "warm", tp: inProcess},
	}
	var b strings.Builder
	runnerTable(&b, rows)
	var got []string
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| terraform_data") {
			got = append(got, line)
		}
	}
	want := []string{"| terraform_data | 10 | cold | 4.0 / 5.0 | 1.25× | 2.0 / 3.0 | 2.50 | 2.0 | 1.00 / 1.20 | 71 | 1 | 0 / 0 |"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runner table (-want +got):\n%s", diff)
	}
	b.Reset()
	runnerTable(&b, rows[1:])
	if b.Len() != 0 {
		t.Errorf("a table without a runner side:\n%s", b.String())
	}
}

// TestWakeTable: the wake table has a line per row whose runner side measured a claim
// after the runner stopped idle, with the ratio to a claim on the running runner; none
// without such a row.
func TestWakeTable(t *testing.T) {
	rows := []row{
		{variant: "aws-s3", n: 50, start: "cold", rn: tpResult{ready: timing{last: time.Second}}},
		{variant: "aws-s3", n: 50, start: "warm", rn: tpResult{ready: timing{last: time.Second},
			wake: wakeResult{stopped: 21 * time.Second, cold: 3 * time.Second, warm: 2 * time.Second}}},
	}
	var b strings.Builder
	wakeTable(&b, rows)
	var got []string
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| aws-s3") {
			got = append(got, line)
		}
	}
	if diff := cmp.Diff([]string{"| aws-s3 | 50 | 21 | 3.0 / 2.0 | 1.50× |"}, got); diff != "" {
		t.Errorf("wake table (-want +got):\n%s", diff)
	}
	b.Reset()
	wakeTable(&b, rows[:1])
	if b.Len() != 0 {
		t.Errorf("a table without a wake:\n%s", b.String())
	}
}

// TestGrowthPerClaim: each count's growth per claim, the largest first, counts that did
// not grow left out.
func TestGrowthPerClaim(t *testing.T) {
	before := map[string]float64{"PATCH 200": 10, "POST 201": 5, "PUT 409": 2}
	now := map[string]float64{"PATCH 200": 30, "POST 201": 25, "PUT 409": 2, "PATCH 409": 1}
	if got, want := growthPerClaim(now, before, 10), "PATCH 200 2.00, POST 201 2.00, PATCH 409 0.10"; got != want {
		t.Fatalf("growthPerClaim = %q, want %q", got, want)
	}
}

// TestLabel: a sample line's label value, "" for a label it lacks.
func TestLabel(t *testing.T) {
	line := `apiserver_request_total{code="200",subresource="status",resource="secrets",verb="LIST"} 3`
	if got := label(line, "verb") + " " + label(line, "resource") + "|" + label(line, "code") + "|" + label(line, "scope"); got != "LIST secrets|200|" {
		t.Fatalf("label = %q", got)
	}
}

// TestAddSeries: samples of the metric add up under their key; other metrics, and a
// metric whose name only begins with it, are left out.
func TestAddSeries(t *testing.T) {
	by := map[string]float64{}
	for _, line := range []string{
		`apiserver_request_total{resource="secrets",subresource="",verb="LIST"} 3`,
		`apiserver_request_total{resource="secrets",subresource="",verb="LIST",code="500"} 1`,
		`apiserver_request_total{resource="buckets",subresource="status",verb="PATCH"} 2`,
		`apiserver_request_total_other{resource="secrets",subresource="",verb="LIST"} 7`,
		`rest_client_requests_total{code="200",method="GET"} 9`,
	} {
		addSeries(by, line, "apiserver_request_total", verbAndResource)
	}
	if want := map[string]float64{"LIST secrets": 4, "PATCH buckets/status": 2}; !maps.Equal(by, want) {
		t.Fatalf("addSeries = %v, want %v", by, want)
	}
	a := newAPICounts()
	for _, line := range []string{
		`apiserver_storage_list_fetched_objects_total{group="",index="",resource="secrets",storage="etcd"} 2151`,
		`apiserver_storage_list_fetched_objects_total{group="",index="",resource="secrets",storage="watchcache"} 1.1886818e+07`,
		`apiserver_storage_list_returned_objects_total{group="",resource="secrets",storage="watchcache"} 13303`,
		`apiserver_storage_list_fetched_objects_total{group="storage.terraplane.io",index="",resource="buckets",storage="etcd"} 40`,
		`apiserver_storage_consistency_checks_total{group="",resource="secrets",status="success"} 8`,
		`apiserver_storage_consistency_checks_total{group="storage.terraplane.io",resource="buckets",status="failure"} 2`,
		`apiserver_watch_cache_initializations_total{group="storage.terraplane.io",resource="buckets"} 3`,
	} {
		a.add(line)
	}
	if want := map[string]float64{"secrets from the watch cache": 11886818, "secrets from etcd": 2151,
		"buckets.storage.terraplane.io from etcd": 40}; !maps.Equal(a.listed, want) {
		t.Fatalf("the objects listed = %v, want %v", a.listed, want)
	}
	if want := map[string]float64{"secrets checked, success": 8, "buckets.storage.terraplane.io checked, failure": 2,
		"buckets.storage.terraplane.io cache built": 3}; !maps.Equal(a.cache, want) {
		t.Fatalf("the watch caches' checks = %v, want %v", a.cache, want)
	}
}
