package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// callerModule reports who terraform is to AWS.
var callerModule = map[string]string{"main.tf": `
terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}
data "aws_caller_identity" "me" {}
output "arn" { value = data.aws_caller_identity.me.arn }
`}

// TestInjectedIdentity gives the controller an IRSA-style workload identity (AWS_ROLE_ARN
// and a web-identity token file, as EKS injects them) and no access keys anywhere. An aws
// Provider with credentials.source InjectedIdentity and a ProviderConfig that names the
// identity variables both reach AWS (moto's STS and S3) as the assumed role.
func TestInjectedIdentity(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-identity"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	moto, err := framework.StartMoto(ctx, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	defer moto.Stop()

	By(t, "the controller's pod has a web identity and no static AWS keys")
	token := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(token, []byte("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6dGVycmFwbGFuZSJ9.c2ln"), 0o600)).To(Succeed())
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/terraplane-e2e")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_SESSION_NAME", "terraplane")
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(k, "")
		g.Expect(os.Unsetenv(k)).To(Succeed())
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "the API server refuses a Provider with neither a Secret nor an injected identity, and a non-identity variable")
	err = env.Client.Create(ctx, &awsv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nothing"}, Spec: awsv1.ProviderSpec{Region: "us-east-1"}})
	g.Expect(err).To(MatchError(ContainSubstring("set credentialsSecretRef for credentials from a Secret, or credentials.source: InjectedIdentity")))
	err = env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaky"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/aws", InjectedIdentity: []string{"DATABASE_PASSWORD"}}})
	g.Expect(err).To(MatchError(ContainSubstring("Unsupported value")))

	By(t, "an S3Bucket through an aws Provider with credentials.source InjectedIdentity and no Secret")
	provider := &awsv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "irsa"}, Spec: awsv1.ProviderSpec{
		Region:               "us-east-1",
		Credentials:          &awsv1.Credentials{Source: awsv1.CredentialsSourceInjectedIdentity},
		Endpoint:             moto.Endpoint,
		Endpoints:            map[string]awsv1.EndpointURL{"sts": awsv1.EndpointURL(moto.Endpoint), "iam": awsv1.EndpointURL(moto.Endpoint)},
		S3UsePathStyle:       true,
		SkipMetadataAPICheck: true,
	}}
	g.Expect(env.Client.Create(ctx, provider)).To(Succeed())
	bucket := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "irsa-bucket"}}
	bucket.Spec.ProviderRef = &common.LocalReference{Name: provider.Name}
	bucket.Spec.ReclaimPolicy = common.ReclaimRetain
	bucket.Spec.ForProvider = awsstoragev1.S3BucketParameters{BucketName: "terraplane-irsa-e2e"}

	By(t, "a Module through a ProviderConfig whose injectedIdentity names the variables")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "caller"}, Data: callerModule}
	config := `{"region": "us-east-1", "skip_metadata_api_check": true, "endpoints": [{"sts": "` + moto.Endpoint + `"}]}`
	pc := func(name string, identity ...string) *terraformv1.ProviderConfig {
		return &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: terraformv1.ProviderConfigSpec{
			Source: "hashicorp/aws", Version: "5.100.0", Config: &apiextensionsv1.JSON{Raw: []byte(config)}, InjectedIdentity: identity}}
	}
	module := func(name, providerConfig string) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}
		m.Spec.ProviderRef = &common.LocalReference{Name: providerConfig}
		m.Spec.ReclaimPolicy = common.ReclaimRetain
		return m
	}
	caller, missing := module("caller", "irsa"), module("missing", "pod-identity")
	for _, o := range []client.Object{bucket, cm, pc("irsa", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_SESSION_NAME"),
		pc("pod-identity", "AWS_CONTAINER_CREDENTIALS_FULL_URI"), caller, missing} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(caller), caller)).To(Succeed())
		g.Expect(framework.Condition(caller.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "%v", caller.Status.Conditions)
		g.Expect(string(caller.Status.AtProvider.Raw)).To(ContainSubstring("assumed-role/terraplane-e2e/terraplane"))
	}).WithTimeout(timeout).Should(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bucket), bucket)).To(Succeed())
		g.Expect(framework.Condition(bucket.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "%v", bucket.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())
	u, _ := url.Parse(moto.Endpoint)
	mc, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4("any", "any", "")})
	g.Expect(err).NotTo(HaveOccurred())
	exists, err := mc.BucketExists(ctx, "terraplane-irsa-e2e")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue(), "the bucket is in moto's S3")

	By(t, "a ProviderConfig naming an identity variable the controller lacks says so")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(missing), missing)).To(Succeed())
		synced := framework.Condition(missing.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("InjectedIdentityMissing"))
		g.Expect(synced.Message).To(ContainSubstring("AWS_CONTAINER_CREDENTIALS_FULL_URI"))
	}).WithTimeout(timeout).Should(Succeed())
}
