package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// TestProviderConfigEditRollsOut: a ModuleClass names a ProviderConfig, and four claims run
// it; one of their Modules follows revisions by hand (revisionPolicy Manual). With the
// class's rollout paused, an edit of the ProviderConfig makes a new revision that keeps
// the edited spec, and moves no Module. Resumed, the rollout moves the three that follow
// new revisions, one wave each, and the Manual one stays where it was.
func TestProviderConfigEditRollsOut(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-pc-rollout"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "pc-rollout-module"}, Data: teamModule}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	pc := &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "random-rollout"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}}
	g.Expect(env.Client.Create(ctx, pc)).To(Succeed())
	class := moduleClass(adminNS, "pc-rollout", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}},
		[]terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	class.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: pc.Name}}
	class.SpecTemplate.Rollout = &common.RolloutPolicy{Canary: ptr.To[int32](1), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "pc-rollout"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: class.Name, Namespace: adminNS}})).To(Succeed())

	By(t, "four claims run the class's first revision, which keeps the ProviderConfig's spec")
	var mods []*terraformv1.Module
	for i := range 4 {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: fmt.Sprintf("pc-%d", i)}}
		c.Spec.ClassRef = &common.LocalReference{Name: "pc-rollout"}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		waitClaimReady(g, ctx, c)
		mods = append(mods, &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: c.Spec.ResourceRef.Name}})
	}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
	first := class.Status.LatestRevision
	g.Expect(keptVersion(g, ctx, first, pc.Name)).To(Equal("3.9.0"))
	manual := mods[0]
	g.Expect(updateLatest(ctx, manual, func() { manual.Spec.RevisionPolicy = common.RevisionManual })).To(Succeed())

	By(t, "with the rollout paused, a ProviderConfig edit makes a new revision and moves nothing")
	g.Expect(updateLatest(ctx, class, func() { class.SpecTemplate.Rollout.Paused = true })).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(framework.Condition(class.Status.Conditions, common.TypeRolloutPaused).Reason).To(Equal(common.ReasonRolloutPauseRequested))
	}).WithTimeout(timeout).Should(Succeed())
	edited := time.Now()
	g.Expect(updateLatest(ctx, pc, func() { pc.Spec.Version = "~> 3.9.0" })).To(Succeed())
	var second string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		second = class.Status.LatestRevision
		g.Expect(second).NotTo(Equal(first))
		g.Expect(keptVersion(g, ctx, second, pc.Name)).To(Equal("~> 3.9.0"))
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("the ProviderConfig edit made revision %s %s after it", second, time.Since(edited).Round(time.Second))
	g.Consistently(func(g Gomega) {
		for _, m := range mods {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(m.Spec.Revision).To(Equal(first), "a paused rollout moves nothing")
			g.Expect(m.Status.Revision).To(Equal(first))
		}
	}).WithTimeout(10 * time.Second).Should(Succeed())

	By(t, "resumed, the three Modules that follow new revisions move in waves; the Manual one stays")
	resumed := time.Now()
	g.Expect(updateLatest(ctx, class, func() { class.SpecTemplate.Rollout.Paused = false })).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, m := range mods[1:] {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(m.Status.Revision).To(Equal(second), "Module %s", m.Name)
			g.Expect(framework.Condition(m.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(class.Status.Rollout.CompletedAt).NotTo(BeNil())
		g.Expect(class.Status.Rollout.Wave).To(BeNumerically(">=", 3), "canary 1, then batches of 1")
	}).WithTimeout(2 * timeout).Should(Succeed())
	t.Logf("the revision reached 3 Modules in %d waves, %s after the resume", class.Status.Rollout.Wave, time.Since(resumed).Round(time.Second))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(manual), manual)).To(Succeed())
	g.Expect(manual.Spec.Revision).To(Equal(first), "revisionPolicy Manual holds the Module on its revision")
	g.Expect(manual.Status.Revision).To(Equal(first))
}

// keptVersion is the version constraint revision rev keeps for ProviderConfig name.
func keptVersion(g Gomega, ctx context.Context, rev, name string) string {
	r := &terraformv1.ClassRevision{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: rev}, r)).To(Succeed())
	for _, pc := range r.Spec.ProviderConfigs {
		if pc.Name == name {
			var spec terraformv1.ProviderConfigSpec
			g.Expect(json.Unmarshal(pc.Spec.Raw, &spec)).To(Succeed())
			return spec.Version
		}
	}
	return ""
}
