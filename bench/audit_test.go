package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCountWrites: audit events count by writer (the user agent's first word), verb,
// object with its subresource, and code; a line cut short is passed over.
func TestCountWrites(t *testing.T) {
	log := strings.Join([]string{
		`{"verb":"patch","userAgent":"terraplane/v0.1 (linux/amd64)","objectRef":{"resource":"modules","subresource":"status"},"responseStatus":{"code":200}}`,
		`{"verb":"patch","userAgent":"terraplane/v0.1 (linux/amd64)","objectRef":{"resource":"modules","subresource":"status"},"responseStatus":{"code":200}}`,
		`{"verb":"patch","userAgent":"terraplane/v0.1 (linux/amd64)","objectRef":{"resource":"modules","subresource":"status"},"responseStatus":{"code":409}}`,
		`{"verb":"create","userAgent":"HashiCorp/1.0 Terraform/1.11.4","objectRef":{"resource":"leases"},"responseStatus":{"code":201}}`,
		`{"verb":"create","userAgent":"Ter`,
	}, "\n")
	got, err := countWrites(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := map[write]int{
		{agent: "terraplane", verb: "patch", object: "modules/status", code: 200}: 2,
		{agent: "terraplane", verb: "patch", object: "modules/status", code: 409}: 1,
		{agent: "HashiCorp", verb: "create", object: "leases", code: 201}:         1,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(write{})); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	table := writesTable(got, 2)
	for _, line := range []string{"| terraplane | patch | modules/status | 200 | 1.00 |", "| all | | | | 2.00 |"} {
		if !strings.Contains(table, line) {
			t.Errorf("table lacks %q:\n%s", line, table)
		}
	}
	if strings.Index(table, "| 200 | 1.00") > strings.Index(table, "| 409 |") {
		t.Errorf("the most frequent write is not first:\n%s", table)
	}
}
