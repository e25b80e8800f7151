package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
	"terraplane.io/terraplane/tfmodules"
)

// brokenRelease is what a release adds to the bundled PostgreSQL database module: a
// change whose plan fails for every database.
const brokenRelease = `
resource "terraform_data" "release" {
  input = "next"
  lifecycle {
    precondition {
      condition     = var.database_name == ""
      error_message = "the next release cannot serve ${var.database_name}"
    }
  }
}
`

// TestUpgradeStartsARollout: five databases of one bundled DatabaseClass (canary 1, then
// batches of 2) run on the class's first revision; the controller is stopped and a
// controller whose bundled module changed (a release whose change breaks every plan)
// starts. It makes a new revision of the class and rolls it out: the canary alone meets
// it, the rollout pauses, and the four others keep running the first revision, untouched.
func TestUpgradeStartsARollout(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const appNS = "e2e-upgrade"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	dir, err := os.MkdirTemp("", "terraplane-e2e-upgrade-")
	g.Expect(err).NotTo(HaveOccurred())
	defer os.RemoveAll(dir)
	server, err := framework.StartPostgres(dir)
	g.Expect(err).NotTo(HaveOccurred())
	defer server.Stop()

	provider := &pgv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "upgrade-pg"},
		Spec: pgv1.ProviderSpec{Host: server.Host, Port: int32(server.Port), SSLMode: "disable",
			CredentialsSecretRef: pgv1.CredentialsSecretReference{Name: "upgrade-pg-admin"}}}
	class := &pgdbv1.DatabaseClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "upgrade"},
		AllowedNamespaces: framework.Allow(appNS),
		SpecTemplate: pgdbv1.DatabaseClassSpecTemplate{
			ClassSpecTemplate: common.ClassSpecTemplate{ProviderRef: &common.LocalReference{Name: provider.Name},
				Rollout: &common.RolloutPolicy{Canary: ptr.To[int32](1), MaxUnavailable: ptr.To(intstr.FromInt32(2))}},
			ForProvider: pgdbv1.DatabaseParameters{EngineVersion: "15"}}}
	for _, o := range []client.Object{adminSecret(adminNS, "upgrade-pg-admin", server), provider, class,
		&databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "upgrade"},
			ClassRef: common.ClassReference{APIVersion: pgdbv1.GroupVersion.String(), Kind: "DatabaseClass", Name: class.Name, Namespace: adminNS}},
	} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}

	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	stopped := false
	defer func() {
		if !stopped {
			_ = mgr.Stop()
		}
	}()
	By(t, "five databases of the class, Ready on its first revision")
	for i := range 5 {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: fmt.Sprintf("up-%d", i)}}
		c.Spec.ClassRef = &common.LocalReference{Name: "upgrade"}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	}
	databases := func(g Gomega) map[string]pgdbv1.Database {
		list := &pgdbv1.DatabaseList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(adminNS))).To(Succeed())
		out := map[string]pgdbv1.Database{}
		for _, d := range list.Items {
			if d.Spec.ClassRef != nil && d.Spec.ClassRef.Name == class.Name && d.Spec.ClaimRef != nil {
				out[d.Spec.ClaimRef.Name] = d
			}
		}
		return out
	}
	var first string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		first = class.Status.LatestRevision
		g.Expect(first).NotTo(BeEmpty())
		dbs := databases(g)
		g.Expect(dbs).To(HaveLen(5))
		for _, d := range dbs {
			g.Expect(d.Status.Revision).To(Equal(first))
			g.Expect(framework.Condition(d.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		}
	}).WithTimeout(2 * timeout).Should(Succeed())
	planned := map[string]string{}
	for name, d := range databases(g) {
		planned[name] = d.Status.Terraform.LastPlanTime.String()
	}
	g.Expect(mgr.Stop()).To(Succeed())
	stopped = true

	By(t, "a controller whose bundled module changed makes a new revision and rolls it out from a canary")
	release := releaseOf(g, t.TempDir(), "postgresql/database", "release.tf", brokenRelease)
	upgraded, err := env.StartManager(t.TempDir(), app.Options{BundledModulesDir: release})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = upgraded.Stop() }()
	started := time.Now()
	var second string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		second = class.Status.LatestRevision
		g.Expect(second).NotTo(Equal(first))
		paused := framework.Condition(class.Status.Conditions, common.TypeRolloutPaused)
		g.Expect(paused.Status).To(Equal(metav1.ConditionTrue), "RolloutPaused: %+v", paused)
		g.Expect(paused.Reason).To(Equal(common.ReasonRolloutFailed))
		g.Expect(paused.Message).To(ContainSubstring("the next release cannot serve"))
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("the upgraded controller paused the rollout of %s %s after its start: %s",
		second, time.Since(started).Round(time.Second), class.Status.Rollout.Message)

	By(t, "only the canary met the new revision; the others run the first, untouched")
	g.Consistently(func(g Gomega) {
		var moved []string
		for name, d := range databases(g) {
			if d.Spec.Revision == second {
				moved = append(moved, name)
				continue
			}
			g.Expect(d.Spec.Revision).To(Equal(first), name)
			g.Expect(d.Status.Revision).To(Equal(first), name)
			g.Expect(d.Status.Terraform.LastPlanTime.String()).To(Equal(planned[name]), "%s was planned again", name)
			g.Expect(framework.Condition(d.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), name)
		}
		sort.Strings(moved)
		g.Expect(moved).To(Equal([]string{"up-0"}), "the canary alone")
	}).WithTimeout(10 * time.Second).Should(Succeed())
	events, err := env.Events(ctx, class)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(ContainElement(And(HaveField("Reason", common.TypeRolloutPaused), HaveField("Type", corev1.EventTypeWarning))))
}

// releaseOf fills dir with the bundled modules and one file added to one module: what a release
// whose bundled module changed ships.
func releaseOf(g Gomega, dir, module, file, content string) string {
	g.Expect(os.CopyFS(dir, tfmodules.FS)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, module, file), []byte(content), 0o644)).To(Succeed())
	return dir
}
