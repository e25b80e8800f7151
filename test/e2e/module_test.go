package e2e

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// teamModule is a platform team's own module: a random provider and terraform_data.
var teamModule = map[string]string{
	"main.tf": `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
variable "name" { type = string }
variable "flavour" {
  type    = string
  default = "plain"
}
resource "random_password" "p" {
  length  = 20
  special = false
}
resource "terraform_data" "db" {
  input = "${var.name}-${var.flavour}"
}
output "endpoint" { value = terraform_data.db.output }
output "secret" {
  value     = random_password.p.result
  sensitive = true
}
`,
}

func moduleClass(ns, name string, src terraformv1.ModuleSource, inputs []terraformv1.InputMapping) *terraformv1.ModuleClass {
	c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	c.SpecTemplate.Source = src
	c.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
	c.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"flavour": "team"}`)}
	c.SpecTemplate.Inputs = inputs
	c.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}, {FromOutput: "secret", ToKey: "password"}}
	return c
}

func classReady(g Gomega, ctx context.Context, c *terraformv1.ModuleClass) metav1.Condition {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	return framework.Condition(c.Status.Conditions, common.TypeReady)
}

func TestModuleAsClass(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-module"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "team-db-module"}, Data: teamModule}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	// The quick-start demo class (seeded by the auto-scaler tests) shares this ProviderConfig.
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}}))).To(Succeed())
	src := terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}

	By(t, "an invalid mapping makes the class Ready=False naming every problem")
	bad := moduleClass(adminNS, "team-db-bad", src, []terraformv1.InputMapping{{FromFieldPath: "spec.engineVersion", ToVariable: "version"}})
	bad.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, bad)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := classReady(g, ctx, bad)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Message).To(And(ContainSubstring(`unknown variable "version"`), ContainSubstring(`required variable "name" is not supplied`)))
		g.Expect(bad.Status.Variables).To(HaveLen(2))
		g.Expect(bad.Status.Outputs).To(ContainElement(terraformv1.ModuleOutput{Name: "secret", Sensitive: true}))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a missing source and unparsable HCL are refused with a clear condition")
	missing := moduleClass(adminNS, "team-db-missing", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "no-such-module"}}, nil)
	broken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "broken-module"}, Data: map[string]string{"main.tf": `variable "x" {`}}
	g.Expect(env.Client.Create(ctx, broken)).To(Succeed())
	unparsable := moduleClass(adminNS, "team-db-unparsable", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: broken.Name}}, nil)
	for _, c := range []*terraformv1.ModuleClass{missing, unparsable} {
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		ready := classReady(g, ctx, missing)
		g.Expect(ready.Reason).To(Equal("ModuleSourceNotFound"))
		g.Expect(ready.Message).To(ContainSubstring("no-such-module"))
		ready = classReady(g, ctx, unparsable)
		g.Expect(ready.Reason).To(Equal("InvalidModule"))
		g.Expect(ready.Message).To(ContainSubstring("main.tf"))
	}).WithTimeout(timeout).Should(Succeed())

	good := moduleClass(adminNS, "team-db", src, []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	good.AllowedNamespaces = framework.Allow(appNS) // the app team's portable classes may point at it
	g.Expect(env.Client.Create(ctx, good)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, good).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())

	portable := func(name, target string) *databasev1.PostgreSQLInstanceClass {
		return &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name},
			ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: target, Namespace: adminNS}}
	}
	g.Expect(env.Client.Create(ctx, portable("team", "team-db"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, portable("broken", "team-db-bad"))).To(Succeed())

	By(t, "no claim binds to a class that is not Ready")
	refused := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "refused"}}
	refused.Spec.ClassRef = &common.LocalReference{Name: "broken"}
	g.Expect(env.Client.Create(ctx, refused)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := claimStatus(g, ctx, refused)
		g.Expect(framework.Condition(st.Conditions, common.TypeSynced).Reason).To(Equal("ClassNotReady"))
		g.Expect(st.BindingPhase).To(Equal(common.BindingPhaseUnbound))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a PostgreSQLInstance met by the team's module through a ModuleClass")
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "orders"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "team"}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "orders-conn"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitClaimReady(g, ctx, claim)
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "orders-conn"}, secret)).To(Succeed())
	g.Expect(string(secret.Data["endpoint"])).To(Equal("orders-team"))
	g.Expect(secret.Data["password"]).To(HaveLen(20))
	mod := &terraformv1.Module{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: claim.Spec.ResourceRef.Name}, mod)).To(Succeed())
	g.Expect(string(mod.Status.AtProvider.Raw)).NotTo(ContainSubstring(string(secret.Data["password"])), "sensitive outputs stay out of status")

	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod))
	}).WithTimeout(timeout).Should(BeTrue())
}

func TestModuleFromGit(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	repo := t.TempDir()
	g.Expect(os.MkdirAll(filepath.Join(repo, "modules", "db"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(repo, "modules", "db", "main.tf"), []byte(teamModule["main.tf"]), 0o644)).To(Succeed())
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "v1"}, {"tag", "v1.0.0"}} {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{ModuleSourceAllow: []string{"file://" + repo}, AllowInsecureModuleSources: true})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	src := terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "file://" + repo, Ref: "v1.0.0", Path: "modules/db"}}
	appNS := "e2e-module-git"
	class := moduleClass(adminNS, "from-git", src, []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, class).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(class.Status.Variables).To(ContainElement(HaveField("Name", "flavour")))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a claim through the git-sourced class gets the module's outputs; a new tag rolls forward")
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	conn := claimThroughModuleClass(g, ctx, appNS, "from-git", "gitdb")
	g.Expect(string(conn.Data["endpoint"])).To(Equal("gitdb-team"))

	v2 := strings.Replace(teamModule["main.tf"], `output "endpoint" { value = terraform_data.db.output }`, `output "endpoint" { value = "v2:${terraform_data.db.output}" }`, 1)
	g.Expect(os.WriteFile(filepath.Join(repo, "modules", "db", "main.tf"), []byte(v2), 0o644)).To(Succeed())
	for _, args := range [][]string{{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-am", "v2"}, {"tag", "v2.0.0"}} {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
	}
	g.Expect(updateLatest(ctx, class, func() {
		class.SpecTemplate.Source.Git.Ref = "v2.0.0"
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "gitdb-conn"}, conn)).To(Succeed())
		g.Expect(string(conn.Data["endpoint"])).To(Equal("v2:gitdb-team"))
	}).WithTimeout(timeout).Should(Succeed())

	denied := moduleClass(adminNS, "not-allowed", terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "file:///elsewhere", Ref: "v1"}}, nil)
	g.Expect(env.Client.Create(ctx, denied)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := classReady(g, ctx, denied)
		g.Expect(ready.Reason).To(Equal("ModuleSourceNotAllowed"))
	}).WithTimeout(timeout).Should(Succeed())
}

// TestModuleFromOCI serves a module as an OCI artifact from a real registry on loopback.
func TestModuleFromOCI(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	appNS := "e2e-module-oci"
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	reg := httptest.NewServer(registry.New())
	defer reg.Close()
	img, err := crane.Image(map[string][]byte{"modules/db/main.tf": []byte(teamModule["main.tf"])})
	g.Expect(err).NotTo(HaveOccurred())
	ref := strings.TrimPrefix(reg.URL, "http://") + "/modules/db:v1.0.0"
	g.Expect(crane.Push(img, ref)).To(Succeed())

	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	class := moduleClass(adminNS, "from-oci", terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: ref, Path: "modules/db"}},
		[]terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, class).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())

	conn := claimThroughModuleClass(g, ctx, appNS, "from-oci", "ocidb")
	g.Expect(string(conn.Data["endpoint"])).To(Equal("ocidb-team"))
}

// claimThroughModuleClass makes a PostgreSQLInstance named claim in appNS whose portable
// class points at the ModuleClass moduleClass, waits until it is Ready and returns its
// connection Secret. It also makes sure the random ProviderConfig the team module uses exists.
func claimThroughModuleClass(g Gomega, ctx context.Context, appNS, moduleClass, claimName string) *corev1.Secret {
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}}))).To(Succeed())
	mc := &terraformv1.ModuleClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: moduleClass}, mc)).To(Succeed())
	if mc.AllowedNamespaces == nil { // the platform team consents to claims from appNS
		patch := client.MergeFrom(mc.DeepCopy())
		mc.AllowedNamespaces = framework.Allow(appNS)
		g.Expect(env.Client.Patch(ctx, mc, patch)).To(Succeed())
	}
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: moduleClass},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: moduleClass, Namespace: adminNS}})).To(Succeed())
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: claimName}}
	claim.Spec.ClassRef = &common.LocalReference{Name: moduleClass}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: claimName + "-conn"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitClaimReady(g, ctx, claim)
	conn := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: claimName + "-conn"}, conn)).To(Succeed())
	return conn
}

// defaultsModule needs no inputs: its only variable has a default.
var defaultsModule = map[string]string{"main.tf": `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
variable "length" {
  type    = number
  default = 12
}
resource "random_string" "s" {
  length  = var.length
  special = false
}
output "value" { value = random_string.s.result }
`}

// TestModuleWithoutInputs: a Module with no forProvider, and a ModuleClass with neither
// forProvider nor inputs, run to Ready with the module's defaults.
func TestModuleWithoutInputs(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-module-noinputs"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "defaults-module"}, Data: defaultsModule}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}}))).To(Succeed())
	src := terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}

	By(t, "a Module with no forProvider")
	mod := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "no-inputs"}}
	mod.Spec.Source = src
	mod.Spec.ProviderRef = &common.LocalReference{Name: "random"}
	g.Expect(env.Client.Create(ctx, mod)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(framework.Condition(mod.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "%v", mod.Status.Conditions)
		g.Expect(string(mod.Status.AtProvider.Raw)).To(MatchRegexp(`"value":"[A-Za-z0-9]{12}"`))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a claim through a ModuleClass with neither forProvider nor inputs")
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "no-inputs"}}
	class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	class.SpecTemplate.Source = src
	class.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, class).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	conn := claimThroughModuleClass(g, ctx, appNS, class.Name, "defaults")
	g.Expect(conn.Data["value"]).To(HaveLen(12))

	g.Expect(env.Client.Delete(ctx, mod)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod))
	}).WithTimeout(timeout).Should(BeTrue())
}
