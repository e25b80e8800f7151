package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
)

// TestAbandon: abandon sets the abandon annotation the managed reconciler honours, and
// --undo takes it off, keeping the other annotations; each says what deletion does now.
func TestAbandon(t *testing.T) {
	for _, tc := range []struct {
		name   string
		on     bool
		before map[string]string
		want   map[string]string
		says   string
	}{
		{"marks it", true, map[string]string{"team": "net"}, map[string]string{"team": "net", common.AbandonAnnotation: "true"}, "deleting it destroys nothing"},
		{"undo takes the mark off", false, map[string]string{"team": "net", common.AbandonAnnotation: "true"}, map[string]string{"team": "net"}, "follows its reclaim policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mg := heldModule("aaaa000000000001", metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionTrue})
			mg.Annotations = tc.before
			mg.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
			c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(mg).Build()
			var out bytes.Buffer
			if err := abandon(context.Background(), c, mg, tc.on, &out, &output{}); err != nil {
				t.Fatal(err)
			}
			got := &terraformv1.Module{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(mg), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if !strings.Contains(out.String(), tc.says) || !strings.Contains(out.String(), "Module/net") {
				t.Errorf("output %q, want it to name Module/net and say %q", out.String(), tc.says)
			}
		})
	}
}
