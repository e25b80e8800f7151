package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

var (
	storeGVK      = schema.GroupVersionKind{Group: "storage.example.org", Version: "v1alpha1", Kind: "Store"}
	storeClassGVK = storeGVK.GroupVersion().WithKind("StoreClass")
)

// fillerVariables is how many variables writeStoreModule adds to the test module, as
// the popular public modules have a couple of hundred.
const fillerVariables = 200

// writeStoreModule copies the store test module (local submodules included) into a
// directory of its own and adds fillerVariables optional variables of assorted types.
func writeStoreModule(g Gomega, dir string) string {
	g.Expect(os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "publicmodule", "store")))).To(Succeed())
	types := []struct{ ty, def string }{
		{"string", `""`}, {"number", "0"}, {"bool", "false"}, {"list(string)", "[]"},
		{"map(string)", "{}"}, {"object({ enabled = optional(bool, false), size = optional(number) })", "{}"},
	}
	var b strings.Builder
	for i := range fillerVariables {
		t := types[i%len(types)]
		fmt.Fprintf(&b, "variable \"setting_%03d\" {\n  description = \"Setting %d.\"\n  type        = %s\n  default     = %s\n}\n\n", i, i, t.ty, t.def)
	}
	g.Expect(os.WriteFile(filepath.Join(dir, "generated.tf"), []byte(b.String()), 0o644)).To(Succeed())
	return dir
}

// runTerraplane runs the terraplane binary against the test's API server.
func runTerraplane(t *testing.T, args ...string) (string, error) {
	out, err := exec.Command(terraplaneBinary(t), append(args, "--kubeconfig", env.ControlPlane.Kubeconfig)...).CombinedOutput()
	return string(out), err
}

// kubectlApply applies a file of manifests as a platform engineer does.
func kubectlApply(g Gomega, file string) {
	out, err := exec.Command(kubectlBin(g), "--kubeconfig", env.ControlPlane.Kubeconfig, "apply", "-f", file).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl apply: %s", out)
}

// motoProviderConfig is an aws ProviderConfig for moto with access keys from a Secret,
// whose access key ID connection Secrets may hand out.
func motoProviderConfig(ns, name, secret, endpoint string) *terraformv1.ProviderConfig {
	config := fmt.Sprintf(`{"region": "us-east-1", "s3_use_path_style": true, "skip_credentials_validation": true,
		"skip_metadata_api_check": true, "skip_requesting_account_id": true, "endpoints": [{"s3": %q, "sts": %q}]}`, endpoint, endpoint)
	cred := func(env, key string) terraformv1.CredentialEnv {
		return terraformv1.CredentialEnv{Env: env, SecretKeyRef: terraformv1.SecretKeySelector{Name: secret, Key: key}}
	}
	return &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: terraformv1.ProviderConfigSpec{
		Source: "hashicorp/aws", Config: &apiextensionsv1.JSON{Raw: []byte(config)},
		Credentials:           []terraformv1.CredentialEnv{cred("AWS_ACCESS_KEY_ID", "access-key-id"), cred("AWS_SECRET_ACCESS_KEY", "secret-access-key")},
		ConnectionCredentials: []string{"AWS_ACCESS_KEY_ID"},
	}}
}

// motoS3 is an S3 client of moto.
func motoS3(g Gomega, endpoint string) *minio.Client {
	u, err := url.Parse(endpoint)
	g.Expect(err).NotTo(HaveOccurred())
	mc, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4("any", "any", ""), Region: "us-east-1"})
	g.Expect(err).NotTo(HaveOccurred())
	return mc
}

// storeClaim reads a Store claim and its Ready and Synced conditions.
func storeClaim(g Gomega, ctx context.Context, ns, name string) (*unstructured.Unstructured, map[string]metav1.Condition) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(storeGVK)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	conds := map[string]metav1.Condition{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		conds[typ] = metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
	}
	return u, conds
}

// storeModule is the Module a Store claim is bound to.
func storeModule(g Gomega, ctx context.Context, claim *unstructured.Unstructured) *terraformv1.Module {
	ref, _, _ := unstructured.NestedString(claim.Object, "spec", "resourceRef", "name")
	g.Expect(ref).NotTo(BeEmpty(), "the claim is bound")
	mod := &terraformv1.Module{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: ref}, mod)).To(Succeed())
	return mod
}

// moduleClassReady is a ModuleClass's Ready condition.
func moduleClassReady(g Gomega, ctx context.Context, ns, name string) metav1.Condition {
	mc := &terraformv1.ModuleClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, mc)).To(Succeed())
	return framework.Condition(mc.Status.Conditions, common.TypeReady)
}

// eventReasons lists the reasons of the events about obj.
func eventReasons(g Gomega, ctx context.Context, obj client.Object) []string {
	events, err := env.Events(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	var reasons []string
	for _, ev := range events {
		reasons = append(reasons, ev.Reason)
	}
	return reasons
}

// credentialsSecret holds moto's (any) access keys.
func motoCredentials(ns, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{"access-key-id": "AKIAEXAMPLESTORE", "secret-access-key": "moto-secret"}}
}
