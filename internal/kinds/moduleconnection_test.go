package kinds

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestModuleConnectionValues: a Module's connection entries hand out literal values,
// settings of the ProviderConfigs it uses and the credentials those list in
// connectionCredentials; a credential not listed, a ProviderConfig it does not use, or a
// setting that is not there is a user error naming the key. Outputs map only as listed.
func TestModuleConnectionValues(t *testing.T) {
	pc := &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "aws"}, Spec: terraformv1.ProviderConfigSpec{
		Source: "hashicorp/aws", Config: &apiextensionsv1.JSON{Raw: []byte(`{"region": "us-east-1", "endpoints": [{"s3": "http://minio:9000"}]}`)},
		Credentials: []terraformv1.CredentialEnv{
			{Env: "AWS_ACCESS_KEY_ID", SecretKeyRef: terraformv1.SecretKeySelector{Name: "creds", Key: "id"}},
			{Env: "AWS_SECRET_ACCESS_KEY", SecretKeyRef: terraformv1.SecretKeySelector{Name: "creds", Key: "secret"}}},
		ConnectionCredentials: []string{"AWS_ACCESS_KEY_ID"}}}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "creds"}, Data: map[string][]byte{"id": []byte("AKID"), "secret": []byte("s3cr3t")}}
	other := &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "other"}, Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random"}}
	c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(pc, creds, other).Build()
	text := func(s string) *string { return &s }
	from := func(name, path, cred string) *terraformv1.ProviderConfigValue {
		return &terraformv1.ProviderConfigValue{Name: name, ConfigPath: path, Credential: cred}
	}
	module := func(entries ...terraformv1.ConnectionMapping) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m"}}
		m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "aws"}}
		m.Spec.Connection = entries
		return m
	}
	good := module(
		terraformv1.ConnectionMapping{FromOutput: "bucket", ToKey: "bucket"},
		terraformv1.ConnectionMapping{Value: text("path"), ToKey: "addressing"},
		terraformv1.ConnectionMapping{FromProviderConfig: from("aws", "region", ""), ToKey: "region"},
		terraformv1.ConnectionMapping{FromProviderConfig: from("aws", "endpoints.0.s3", ""), ToKey: "endpoint"},
		terraformv1.ConnectionMapping{FromProviderConfig: from("aws", "", "AWS_ACCESS_KEY_ID"), ToKey: "accessKeyID"})
	pcfg, err := resolveProviderConfigs(context.Background(), c, good)
	if err != nil {
		t.Fatal(err)
	}
	kind := moduleKind(nil).Terraform
	got := map[string]string{}
	for k, v := range kind.ProviderConnection(good, pcfg) {
		got[k] = string(v)
	}
	want := map[string]string{"addressing": "path", "region": "us-east-1", "endpoint": "http://minio:9000", "accessKeyID": "AKID"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("connection details (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"bucket": "bucket"}, kind.ConnectionKeysFor(good)); diff != "" {
		t.Errorf("outputs published (-want +got):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		entry terraformv1.ConnectionMapping
		want  string
	}{
		"a credential not handed out": {terraformv1.ConnectionMapping{FromProviderConfig: from("aws", "", "AWS_SECRET_ACCESS_KEY"), ToKey: "secretAccessKey"},
			"connection key secretAccessKey: providerconfigs.terraform.terraplane.io aws hands out no credential AWS_SECRET_ACCESS_KEY"},
		"a ProviderConfig not used": {terraformv1.ConnectionMapping{FromProviderConfig: from("other", "x", ""), ToKey: "x"},
			"providerconfigs.terraform.terraplane.io other is not one this resource uses"},
		"a setting not there": {terraformv1.ConnectionMapping{FromProviderConfig: from("aws", "endpoints.1.s3", ""), ToKey: "endpoint"},
			"providerconfigs.terraform.terraplane.io aws has no config endpoints.1.s3"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := resolveProviderConfigs(context.Background(), c, module(tc.entry))
			u, ok := resource.AsUserError(err)
			if !ok || u.Reason != ReasonInvalidConnection || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a %s user error containing %q", err, ReasonInvalidConnection, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error shows a credential: %v", err)
			}
		})
	}
}
