package collectors

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

const observabilityDocs = "../../docs/observability"

// documentedSeries are the Terraplane series docs/observability.md lists in its tables.
func documentedSeries(t *testing.T) map[string]bool {
	t.Helper()
	page, err := os.ReadFile(observabilityDocs + ".md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(terraplane_[a-z_]+)").FindAllStringSubmatch(string(page), -1) {
		out[m[1]] = true
	}
	return out
}

// seriesOf are the metric names expr selects, histograms' _bucket, _sum and _count
// suffixes taken off.
func seriesOf(t *testing.T, expr string) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if strings.HasPrefix(name, "terraplane_") && strings.HasSuffix(name, "_seconds"+suffix) {
					name = strings.TrimSuffix(name, suffix)
				}
			}
			names = append(names, name)
		}
		return nil
	})
	return names
}

// TestAlertRules: docs/observability/alerts.yaml is a valid Prometheus rule file, whose
// expressions use only documented series.
func TestAlertRules(t *testing.T) {
	groups, errs := rulefmt.ParseFile(observabilityDocs+"/alerts.yaml", false, model.UTF8Validation, parser.NewParser(parser.Options{}))
	if len(errs) > 0 {
		t.Fatalf("alerts.yaml: %v", errs)
	}
	documented := documentedSeries(t)
	alerts := 0
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts++
			if r.Alert == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %q: want an alert with a summary", r.Alert)
			}
			for _, name := range seriesOf(t, r.Expr) {
				if !documented[name] {
					t.Errorf("alert %s uses %s, which docs/observability.md does not list", r.Alert, name)
				}
			}
		}
	}
	if alerts < 8 {
		t.Errorf("%d alerts, want the ones docs/observability.md lists", alerts)
	}
}

// TestDashboard: docs/observability/grafana-dashboard.json is a dashboard whose panels'
// queries parse as PromQL and use only documented series.
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile(observabilityDocs + "/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	type datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	var dash struct {
		Inputs []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			PluginID string `json:"pluginId"`
		} `json:"__inputs"`
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title      string      `json:"title"`
			Datasource *datasource `json:"datasource"`
			Targets    []struct {
				Datasource *datasource `json:"datasource"`
				Expr       string      `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) < 10 {
		t.Fatalf("dashboard %q (uid %q) with %d panels", dash.Title, dash.UID, len(dash.Panels))
	}
	// Grafana's import dialog asks for the data source of each input, and puts the one
	// chosen wherever the dashboard names the input
	if len(dash.Inputs) != 1 || dash.Inputs[0].Type != "datasource" || dash.Inputs[0].PluginID != "prometheus" {
		t.Fatalf("__inputs %+v, want one Prometheus data source input", dash.Inputs)
	}
	input := datasource{Type: "prometheus", UID: "${" + dash.Inputs[0].Name + "}"}
	documented := documentedSeries(t)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		if p.Datasource == nil || *p.Datasource != input {
			t.Errorf("panel %q queries data source %+v, not the input %+v", p.Title, p.Datasource, input)
		}
		for _, target := range p.Targets {
			if target.Datasource != nil && *target.Datasource != input {
				t.Errorf("a query of panel %q names data source %+v, not the input %+v", p.Title, target.Datasource, input)
			}
			for _, name := range seriesOf(t, strings.ReplaceAll(target.Expr, "$__rate_interval", "5m")) {
				used[name] = true
				if !documented[name] {
					t.Errorf("panel %q uses %s, which docs/observability.md does not list", p.Title, name)
				}
			}
		}
	}
	for name := range documented {
		if !used[name] && !slices.Contains([]string{"terraplane_managed_synced", "terraplane_managed_drifted"}, name) {
			t.Errorf("the dashboard shows nothing of %s", name)
		}
	}
}

// TestMetricsAreDocumented: every series of the object gauges, the engine, the terraform
// runs and the runs sent to runner pools is in docs/observability.md.
func TestMetricsAreDocumented(t *testing.T) {
	documented := documentedSeries(t)
	ch := make(chan *prometheus.Desc, 100)
	for _, c := range []prometheus.Collector{&objectCollector{}, &engineCollector{}, terraformRunSeconds, runnerRunsTotal, runnerHopSeconds} {
		c.Describe(ch)
	}
	close(ch)
	n := 0
	for d := range ch {
		name := regexp.MustCompile(`fqName: "([a-z_]+)"`).FindStringSubmatch(d.String())
		if len(name) < 2 || !documented[name[1]] {
			t.Errorf("%s is not documented", d)
		}
		n++
	}
	if n < 15 {
		t.Errorf("described %d series", n)
	}
}
