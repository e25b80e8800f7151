package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestTimingValidation: spec.driftInterval and spec.timeout take Go durations within
// bounds, on Terraform-backed resources and class templates; native kinds refuse them.
func TestTimingValidation(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "int-timing"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	module := func(name string, timing map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"source": map[string]any{"configMap": map[string]any{"name": "m"}}}}}
		u.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
		u.SetNamespace(ns)
		u.SetName(name)
		for k, v := range timing {
			u.Object["spec"].(map[string]any)[k] = v
		}
		return u
	}
	for name, tc := range map[string]struct {
		timing map[string]any
		want   string // "" when accepted
	}{
		"both set":                {map[string]any{"driftInterval": "1h30m", "timeout": "45m"}, ""},
		"a drift check too often": {map[string]any{"driftInterval": "30s"}, "driftInterval must be at least 1m"},
		"a timeout too short":     {map[string]any{"timeout": "10s"}, "timeout must be between 1m and 24h"},
		"a timeout too long":      {map[string]any{"timeout": "48h"}, "timeout must be between 1m and 24h"},
		"no duration":             {map[string]any{"timeout": "an hour"}, "spec.timeout"},
	} {
		err := env.Client.Create(ctx, module("m-timing", tc.timing), client.DryRunAll)
		if tc.want == "" {
			g.Expect(err).NotTo(HaveOccurred(), name)
			continue
		}
		g.Expect(err).To(HaveOccurred(), name)
		g.Expect(err.Error()).To(ContainSubstring(tc.want), name)
	}

	class := &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow"}}
	class.SpecTemplate.Timeout = &metav1.Duration{Duration: 2 * time.Hour}
	class.SpecTemplate.DriftInterval = &metav1.Duration{Duration: 24 * time.Hour}
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
	g.Expect(class.SpecTemplate.Timing.TimeoutOr(0)).To(Equal(2 * time.Hour))

	obj := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "o"}}
	obj.Spec.ProviderRef = &common.LocalReference{Name: "pc"}
	obj.Spec.ForProvider.Manifest = configMapTemplate()
	obj.Spec.Timeout = &metav1.Duration{Duration: time.Hour}
	err := env.Client.Create(ctx, obj, client.DryRunAll)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("driftInterval and timeout apply to Terraform-backed kinds only"))
}
