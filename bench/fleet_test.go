package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestReconcilesBy: every replica's reconciles and reconcile seconds add up by
// controller, over every result; other metrics are left out.
func TestReconcilesBy(t *testing.T) {
	serve := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	f := &fleet{metrics: []string{
		serve(`controller_runtime_reconcile_total{controller="module",result="success"} 10
controller_runtime_reconcile_total{controller="module",result="requeue"} 5
controller_runtime_reconcile_total{controller="claim-bucket",result="success"} 3
controller_runtime_reconcile_time_seconds_sum{controller="module"} 1.5
controller_runtime_reconcile_time_seconds_count{controller="module"} 15
rest_client_requests_total{code="200",host="x",method="GET"} 99
`),
		serve(`controller_runtime_reconcile_total{controller="module",result="success"} 1
controller_runtime_reconcile_time_seconds_sum{controller="module"} 0.5
`),
	}}
	count, seconds := f.reconcilesBy()
	if count["module"] != 16 || count["claim-bucket"] != 3 || len(count) != 2 {
		t.Errorf("reconciles %v, want module 16 and claim-bucket 3", count)
	}
	if seconds["module"] != 2 || len(seconds) != 1 {
		t.Errorf("seconds %v, want module 2", seconds)
	}
}
