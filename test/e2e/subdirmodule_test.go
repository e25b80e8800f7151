package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// sgRepo puts the security group test module (testdata/securitygroup) into a bare
// repository under root as name.git, tagged v5.3.1, with a directory beside its presets
// whose module calls past the repository.
func sgRepo(t *testing.T, g Gomega, root, name string) {
	work := t.TempDir()
	g.Expect(os.CopyFS(work, os.DirFS(filepath.Join("testdata", "securitygroup")))).To(Succeed())
	g.Expect(os.MkdirAll(filepath.Join(work, "modules", "escape"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(work, "modules", "escape", "main.tf"), []byte("module \"up\" {\n  source = \"../../../elsewhere\"\n}\n"), 0o644)).To(Succeed())
	git(t, work, "init", "-q", "-b", "main")
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "security group")
	git(t, work, "tag", "v5.3.1")
	git(t, root, "clone", "-q", "--bare", work, name+".git")
}

// motoEC2ProviderConfig is motoProviderConfig with moto's EC2 endpoint too.
func motoEC2ProviderConfig(ns, name, secret, endpoint string) *terraformv1.ProviderConfig {
	pc := motoProviderConfig(ns, name, secret, endpoint)
	pc.Spec.Config = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"region": "us-east-1", "skip_credentials_validation": true,
		"skip_metadata_api_check": true, "skip_requesting_account_id": true, "endpoints": [{"ec2": %q, "sts": %q}]}`, endpoint, endpoint)}
	return pc
}

// TestModuleFromGitSubdirectoryCallingItsRoot takes a public module's preset, a git
// subdirectory (//modules/http-80) whose module calls ../../, through `terraplane claim
// generate` and kubectl apply to a Ready claim against moto, with real terraform: the
// whole repository is fetched and the module rooted at its directory. A directory of the
// same repository whose module calls past the repository is refused.
func TestModuleFromGitSubdirectoryCallingItsRoot(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-sg-subdir"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	root := t.TempDir()
	sgRepo(t, g, root, "terraform-aws-security-group")
	url := gitHTTPServer(t, root, "", "") + "/terraform-aws-security-group.git"
	moto, err := framework.StartMoto(ctx, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	defer moto.Stop()
	mgr, err := env.StartManager(t.TempDir(), app.Options{AllowInsecureModuleSources: true})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "claim generate takes the preset from git, ../../ and all")
	manifests := filepath.Join(t.TempDir(), "sg.yaml")
	out, err := runTerraplane(t, "claim", "generate", "git::"+url+"//modules/http-80?ref=v5.3.1", "--kind", "WebSecurityGroup",
		"--group", "network.example.org", "-n", adminNS, "--allow-namespace", appNS, "--provider-config", "aws=moto-ec2", "--out", manifests)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(env.Client.Create(ctx, motoCredentials(adminNS, "moto-ec2-credentials"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, motoEC2ProviderConfig(adminNS, "moto-ec2", "moto-ec2-credentials", moto.Endpoint))).To(Succeed())
	kubectlApply(g, manifests)
	mcName := ""
	g.Eventually(func(g Gomega) {
		list := &terraformv1.ModuleClassList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(adminNS))).To(Succeed())
		for _, mc := range list.Items {
			if mc.SpecTemplate.Source.Git != nil && mc.SpecTemplate.Source.Git.URL == url && mc.SpecTemplate.Source.Git.Path == "modules/http-80" {
				mcName = mc.Name
			}
		}
		g.Expect(mcName).NotTo(BeEmpty(), "the generated ModuleClass")
		ready := moduleClassReady(g, ctx, adminNS, mcName)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), ready.Reason+": "+ready.Message)
		g.Expect(definitionReady(g, ctx, "websecuritygroups.network.example.org").Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a claim of the preset is Ready: the security group and its HTTP rule exist")
	sgGVK := schema.GroupVersionKind{Group: "network.example.org", Version: "v1alpha1", Kind: "WebSecurityGroup"}
	g.Expect(env.Client.Create(ctx, defined(g, sgGVK.GroupVersion().WithKind("WebSecurityGroupClass"), appNS, "standard",
		`{"metadata":{"labels":{"terraplane.io/default":"true"}},"classRef":{"apiVersion":"terraform.terraplane.io/v1alpha1","kind":"ModuleClass","name":"`+mcName+`","namespace":"`+adminNS+`"}}`))).To(Succeed())
	g.Expect(env.Client.Create(ctx, defined(g, sgGVK, appNS, "web",
		`{"spec":{"writeConnectionSecretToRef":{"name":"web-sg"},"parameters":{"name":"web","ingress_cidr_blocks":["10.0.0.0/8"],"tags":{"team":"web"}}}}`))).To(Succeed())
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(sgGVK)
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, claim)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(claim.Object, "status", "conditions")
		g.Expect(conds).To(ContainElement(And(HaveKeyWithValue("type", "Ready"), HaveKeyWithValue("status", "True"))), "%v", conds)
	}).WithTimeout(timeout).Should(Succeed())
	mod := storeModule(g, ctx, claim)
	g.Expect(mod.Status.Terraform).NotTo(BeNil())
	g.Expect(mod.Status.Terraform.Resources).To(Equal(2), "the group and its HTTP rule")
	conn := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web-sg"}, conn)).To(Succeed())
	g.Expect(string(conn.Data["security_group_id"])).To(HavePrefix("sg-"))
	g.Expect(string(conn.Data["security_group_name"])).To(Equal("web"))

	By(t, "the class now fixes tags: the claim says its tags are overridden and the class wins, with one Warning event")
	mc := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: mcName}}
	g.Expect(updateLatest(ctx, mc, func() {
		mc.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"tags": {"team": "platform"}}`)}
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, claim)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(claim.Object, "status", "conditions")
		g.Expect(conds).To(ContainElement(And(HaveKeyWithValue("type", "ParametersOverridden"), HaveKeyWithValue("status", "True"),
			HaveKeyWithValue("reason", "ClassValueWins"), HaveKeyWithValue("message", ContainSubstring("spec.parameters.tags: ModuleClass "+adminNS+"/"+mcName+" fixes the value, and the class's value wins")))), "%v", conds)
	}).WithTimeout(timeout).Should(Succeed())
	waitReadyAgain := func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(string(mod.Spec.ForProvider.Raw)).To(ContainSubstring(`"platform"`))
		g.Expect(framework.Condition(mod.Status.Conditions, "Ready").Status).To(Equal(metav1.ConditionTrue))
	}
	g.Eventually(waitReadyAgain).WithTimeout(timeout).Should(Succeed())
	count := func() int { // events repeated are folded into one with a count
		events, err := env.Events(ctx, claim)
		g.Expect(err).NotTo(HaveOccurred())
		n := 0
		for _, ev := range events {
			if ev.Reason == "ClassValueWins" {
				n += max(int(ev.Count), 1)
			}
		}
		return n
	}
	g.Consistently(count).WithTimeout(10*time.Second).Should(Equal(1), "one event, not one per reconcile")

	By(t, "a directory whose module calls past the repository is refused, naming the call")
	escape := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "sg-escape"}}
	escape.SpecTemplate.Source = terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: url, Ref: "v5.3.1", Path: "modules/escape"}}
	g.Expect(env.Client.Create(ctx, escape)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := moduleClassReady(g, ctx, adminNS, escape.Name)
		g.Expect(ready.Reason).To(Equal("ModuleIncomplete"), ready.Message)
		g.Expect(ready.Message).To(ContainSubstring("module up calls ../../../elsewhere, outside the module source's files"))
	}).WithTimeout(timeout).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).NotTo(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
}
