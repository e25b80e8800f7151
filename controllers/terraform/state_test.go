package terraform

import (
	"bytes"
	"compress/gzip"
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"terraplane.io/terraplane/internal/resource"
)

// oneResourceState is a state holding one managed resource and a data source.
const oneResourceState = `{"version":4,"resources":[{"mode":"data","type":"aws_caller_identity","name":"me","instances":[{}]},
  {"mode":"managed","type":"terraform_data","name":"x","instances":[{}]}]}`

// gzipped is s gzipped, as the kubernetes backend stores a state.
func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestResourcesCountedFromTheState: after a create that an earlier, failed create had
// started (terraform reports adding only what this run made), status.terraform.resources
// is what the state holds.
func TestResourcesCountedFromTheState(t *testing.T) {
	h := newHarness(t, nil)
	twoResources := `{"version":4,"resources":[{"mode":"managed","type":"terraform_data","name":"a","instances":[{}]},
  {"mode":"managed","type":"terraform_data","name":"b","instances":[{}]}]}`
	state := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.StateSecretName(h.get()), Namespace: "platform"},
		Data: map[string][]byte{"tfstate": gzipped(t, twoResources)}}
	if err := h.c.Create(context.Background(), state); err != nil {
		t.Fatal(err)
	}
	if got := h.reconcile().Status.Terraform.Resources; got != 2 {
		t.Errorf("status.terraform.resources = %d, want 2 (the runner reported 1 added)", got)
	}
}

func TestCountStateResources(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  []byte
		want int
	}{
		"none":                  {nil, 0},
		"gzipped":               {gzipped(t, oneResourceState), 1},
		"plain":                 {[]byte(oneResourceState), 1},
		"instances are counted": {[]byte(`{"resources":[{"mode":"managed","instances":[{},{},{}]}]}`), 3},
		"data sources are not":  {[]byte(`{"resources":[{"mode":"data","instances":[{}]}]}`), 0},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := countStateResources(tc.raw)
			if err != nil || got != tc.want {
				t.Errorf("countStateResources = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
	if _, err := countStateResources([]byte("not json")); err == nil {
		t.Error("a state that is not JSON is counted")
	}
}
