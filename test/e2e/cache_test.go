package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/resource"
)

// credentialModule writes the credential its ProviderConfig gives terraform to var.report.
const credentialModule = `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
variable "report" { type = string }
resource "random_pet" "p" {}
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "printf %s \"$CACHE_TEST_TOKEN\" > ${var.report}"
  }
}
`

// TestControllerCacheHoldsNoSecretValues: the controller reads a ProviderConfig's
// credentials Secret through the API server, and what its cache holds of Secrets and
// ConfigMaps is metadata: no value, even of an object read through the cache on purpose,
// and nothing of the Terraform state Secrets.
func TestControllerCacheHoldsNoSecretValues(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-cache"
	token := "cache-credential-51d0e2"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "a Module whose ProviderConfig's credential comes from a Secret becomes Ready")
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"token": token}}
	g.Expect(env.Client.Create(ctx, creds)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0",
			Credentials: []terraformv1.CredentialEnv{{Env: "CACHE_TEST_TOKEN", SecretKeyRef: terraformv1.SecretKeySelector{Name: "creds", Key: "token"}}}}})).To(Succeed())
	report := filepath.Join(t.TempDir(), "report")
	inputs, _ := json.Marshal(map[string]any{"report": report})
	m := moduleFrom(g, ctx, ns, "token", map[string]string{"main.tf": credentialModule}, string(inputs))
	m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	waitModuleReady(g, ctx, m)
	got, err := os.ReadFile(report)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(token), "the controller read the credential and gave it to terraform")

	By(t, "the cache knows the Secret by its metadata, and nothing of the state Secret")
	cache := mgr.Runtime.GetCache()
	var state corev1.SecretList
	g.Expect(env.Client.List(ctx, &state, client.InNamespace(ns), client.MatchingLabels{"tfstate": "true"})).To(Succeed())
	g.Expect(state.Items).To(HaveLen(1), "the Module's state is in the cluster")
	g.Expect(state.Items[0].Name).To(Equal(resource.StateSecretName(m)))
	g.Eventually(func(g Gomega) {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		g.Expect(cache.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		g.Expect(names).To(ContainElement("creds"))
		g.Expect(names).NotTo(ContainElement(state.Items[0].Name), "state Secrets are not watched")
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "even read through the cache on purpose, a Secret or ConfigMap comes without its values")
	cached := &corev1.Secret{}
	g.Expect(cache.Get(ctx, client.ObjectKeyFromObject(creds), cached)).To(Succeed())
	g.Expect(cached.Data).To(BeEmpty(), "the cache holds no secret value")
	cm := &corev1.ConfigMap{}
	g.Expect(cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: "token-module"}, cm)).To(Succeed())
	g.Expect(cm.Data).To(BeEmpty(), "the cache holds no module file")

	By(t, "the controllers' client reads them whole, from the API server")
	read := &corev1.Secret{}
	g.Expect(mgr.Runtime.GetClient().Get(ctx, client.ObjectKeyFromObject(creds), read)).To(Succeed())
	g.Expect(string(read.Data["token"])).To(Equal(token))
	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
}
