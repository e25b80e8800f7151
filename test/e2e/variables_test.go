package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// typedModule takes a string, a number and a map, and hands the string back as a secret.
var typedModule = map[string]string{"main.tf": `
variable "password" { type = string }
variable "size" { type = number }
variable "tags" { type = map(string) }
resource "terraform_data" "this" {
  input = "${var.size * 2}-${var.tags["team"]}"
}
output "summary" { value = terraform_data.this.output }
output "password" {
  value     = var.password
  sensitive = true
}
`}

// TestVariablesFromSecretsAndConfigMaps sets module variables from a Secret key (sensitive)
// and ConfigMap keys (a number and a map): the module gets exactly those values, the secret
// is in no file left in the workspace and nowhere in status or events, a changed key is
// applied at once through the watch, and a missing Secret says which.
func TestVariablesFromSecretsAndConfigMaps(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-variables"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	const password, rotated = "vf-s3cr3t-Zq81xw", "vf-r0tated-Kp27yu"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-admin"}, StringData: map[string]string{"password": password}}
	sizing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sizing"}, Data: map[string]string{"size": "21", "tags": `{"team": "blue"}`}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typed-module"}, Data: typedModule}
	from := func(name string, src terraformv1.VariableSource) terraformv1.VariableFrom {
		return terraformv1.VariableFrom{Name: name, ValueFrom: src}
	}
	module := func(name, secretName string) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}
		m.Spec.ReclaimPolicy = common.ReclaimDelete
		m.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: name + "-conn", Namespace: ns}
		m.Spec.VariablesFrom = []terraformv1.VariableFrom{
			from("password", terraformv1.VariableSource{SecretKeyRef: &terraformv1.SecretKeySelector{Name: secretName, Key: "password"}}),
			from("size", terraformv1.VariableSource{ConfigMapKeyRef: &terraformv1.ConfigMapKeySelector{Name: sizing.Name, Key: "size"}}),
			from("tags", terraformv1.VariableSource{ConfigMapKeyRef: &terraformv1.ConfigMapKeySelector{Name: sizing.Name, Key: "tags"}}),
		}
		return m
	}

	By(t, "the API server refuses a variable with both a Secret and a ConfigMap key")
	both := module("both", "db-admin")
	both.Spec.VariablesFrom[0].ValueFrom.ConfigMapKeyRef = &terraformv1.ConfigMapKeySelector{Name: "x", Key: "y"}
	g.Expect(env.Client.Create(ctx, both)).To(MatchError(ContainSubstring("set exactly one of secretKeyRef and configMapKeyRef")))

	By(t, "a Module whose variables come from a Secret and a ConfigMap becomes Ready with exactly those values")
	mod, missing := module("typed", "db-admin"), module("missing", "no-such-secret")
	for _, o := range []client.Object{secret, sizing, cm, mod, missing} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	conn := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(framework.Condition(mod.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "%v", mod.Status.Conditions)
		g.Expect(string(mod.Status.AtProvider.Raw)).To(ContainSubstring(`"summary":"42-blue"`))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "typed-conn"}, conn)).To(Succeed())
		g.Expect(string(conn.Data["password"])).To(Equal(password))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the secret value is in no workspace file once no terraform runs, and not in status or events")
	g.Expect(mgr.Stop()).To(Succeed()) // waits for runs in flight; their secret files go with them
	g.Expect(filepath.WalkDir(mgr.WorkDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		if strings.HasSuffix(path, ".tfplan") {
			t.Errorf("a saved plan, which holds every variable's value, outlived its run: %s", path)
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(password)) {
			t.Errorf("the secret value is in %s", path)
		}
		return nil
	})).To(Succeed())
	status, _ := json.Marshal(mod.Status)
	g.Expect(string(status)).NotTo(ContainSubstring(password))
	events, err := env.Events(ctx, mod)
	g.Expect(err).NotTo(HaveOccurred())
	for _, e := range events {
		g.Expect(e.Message).NotTo(ContainSubstring(password))
	}

	mgr, err = env.StartManager(mgr.WorkDir, app.Options{})
	g.Expect(err).NotTo(HaveOccurred())

	By(t, "a changed Secret key is applied at once, long before the drift interval")
	g.Expect(updateLatest(ctx, secret, func() {
		secret.Data["password"] = []byte(rotated)
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "typed-conn"}, conn)).To(Succeed())
		g.Expect(string(conn.Data["password"])).To(Equal(rotated))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a changed ConfigMap key is applied at once too")
	g.Expect(updateLatest(ctx, sizing, func() {
		sizing.Data["size"] = "30"
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(string(mod.Status.AtProvider.Raw)).To(ContainSubstring(`"summary":"60-blue"`))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a ModuleClass's variablesFrom reaches the resources of the claims it meets")
	appNS := "e2e-variables-app"
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typed"}, AllowedNamespaces: framework.Allow(appNS)}
	class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	class.SpecTemplate.Source = mod.Spec.Source
	class.SpecTemplate.VariablesFrom = mod.Spec.VariablesFrom
	class.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "summary", ToKey: "endpoint"}, {FromOutput: "password", ToKey: "password"}}
	portable := &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "typed"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: class.Name, Namespace: ns}}
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "typed"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: portable.Name}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "typed-conn"}
	for _, o := range []client.Object{class, portable, claim} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	waitClaimReady(g, ctx, claim)
	claimConn := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "typed-conn"}, claimConn)).To(Succeed())
		g.Expect(string(claimConn.Data["endpoint"])).To(Equal("60-blue"))
		g.Expect(string(claimConn.Data["password"])).To(Equal(rotated))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())

	By(t, "a variable whose Secret does not exist says which")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(missing), missing)).To(Succeed())
		synced := framework.Condition(missing.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("VariableSourceNotFound"))
		g.Expect(synced.Message).To(ContainSubstring("Secret " + ns + "/no-such-secret"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "an edit of the ConfigMap holding the module is applied at once, long before the drift interval")
	g.Expect(updateLatest(ctx, cm, func() {
		cm.Data["main.tf"] = strings.Replace(cm.Data["main.tf"], "var.size * 2", "var.size * 3", 1)
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(string(mod.Status.AtProvider.Raw)).To(ContainSubstring(`"summary":"90-blue"`))
	}).WithTimeout(timeout).Should(Succeed())
}
