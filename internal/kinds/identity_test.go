package kinds

import (
	"testing"

	"terraplane.io/terraplane/internal/resource"
)

// TestAWSInjectedIdentity passes on what is injected, and says what is missing otherwise.
func TestAWSInjectedIdentity(t *testing.T) {
	for _, k := range awsIdentityEnv {
		t.Setenv(k, "")
	}
	if _, err := awsInjectedIdentity("ns/p", false); err == nil {
		t.Fatal("no identity and no metadata API: want an error")
	} else if u, ok := resource.AsUserError(err); !ok || u.Reason != "InjectedIdentityMissing" {
		t.Fatalf("got %v, want the user error InjectedIdentityMissing", err)
	}
	if env, err := awsInjectedIdentity("ns/p", true); err != nil || len(env) != 0 {
		t.Fatalf("the metadata API may serve an instance role: got %v, %v", env, err)
	}
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/r")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/secrets/eks.amazonaws.com/serviceaccount/token")
	env, err := awsInjectedIdentity("ns/p", false)
	if err != nil || env["AWS_ROLE_ARN"] != "arn:aws:iam::1:role/r" || env["AWS_WEB_IDENTITY_TOKEN_FILE"] == "" || len(env) != 2 {
		t.Fatalf("got %v, %v", env, err)
	}
	if _, err := providerConfigIdentity("ns/pc", []string{"AWS_ROLE_ARN", "AZURE_CLIENT_ID"}); err == nil {
		t.Fatal("AZURE_CLIENT_ID is not set: want an error")
	}
}
