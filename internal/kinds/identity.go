package kinds

import (
	"os"
	"strings"

	"terraplane.io/terraplane/internal/resource"
)

// awsIdentityEnv are the variables IRSA and EKS Pod Identity inject into a pod; an aws
// Provider with credentials.source InjectedIdentity hands the ones that are set to terraform.
var awsIdentityEnv = []string{
	"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_SESSION_NAME",
	"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_STS_REGIONAL_ENDPOINTS",
	"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
}

// injectedIdentity copies the named variables that are set in the controller's own
// environment, and lists the ones that are not.
func injectedIdentity(names []string) (env map[string]string, missing []string) {
	env = map[string]string{}
	for _, name := range names {
		if v, ok := os.LookupEnv(name); ok && v != "" {
			env[name] = v
		} else {
			missing = append(missing, name)
		}
	}
	return env, missing
}

// awsInjectedIdentity is the injected AWS identity of the controller's pod: a web-identity
// token (IRSA) or a container credentials endpoint (EKS Pod Identity). Without either,
// only the instance metadata API is left, and with skipMetadataAPICheck nothing at all.
func awsInjectedIdentity(provider string, metadataAPI bool) (map[string]string, error) {
	env, _ := injectedIdentity(awsIdentityEnv)
	_, webIdentity := env["AWS_WEB_IDENTITY_TOKEN_FILE"]
	_, podIdentity := env["AWS_CONTAINER_CREDENTIALS_FULL_URI"]
	if !webIdentity && !podIdentity && !metadataAPI {
		return nil, resource.UserErrorf("InjectedIdentityMissing",
			"Provider %s uses InjectedIdentity, but the controller has no AWS identity injected (neither AWS_WEB_IDENTITY_TOKEN_FILE nor AWS_CONTAINER_CREDENTIALS_FULL_URI is set) and skipMetadataAPICheck rules out the instance role; give the controller's ServiceAccount an IAM role (IRSA or EKS Pod Identity), or use credentialsSecretRef", provider)
	}
	return env, nil
}

// providerConfigIdentity is what a ProviderConfig's injectedIdentity names, all of which
// must be set in the controller's environment.
func providerConfigIdentity(providerConfig string, names []string) (map[string]string, error) {
	env, missing := injectedIdentity(names)
	if len(missing) > 0 {
		return nil, resource.UserErrorf("InjectedIdentityMissing",
			"ProviderConfig %s names injectedIdentity %s, which the controller's environment does not have; inject the workload identity into the controller's pod, or remove the names", providerConfig, strings.Join(missing, ", "))
	}
	return env, nil
}

// gcpIdentityEnv are the variables that point Google's application default credentials
// at an injected identity: a credential configuration file (workload identity
// federation) and a service account to impersonate. Without them, GKE Workload Identity
// answers through the metadata server, which needs no variable at all.
var gcpIdentityEnv = []string{"GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_IMPERSONATE_SERVICE_ACCOUNT"}

// azureIdentityEnv are the variables AKS workload identity injects into a pod.
var azureIdentityEnv = []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"}

// azureInjectedIdentity is the injected Azure identity of the controller's pod: AKS
// workload identity when a federated token file is injected, else the managed identity
// of the node (a user-assigned one when AZURE_CLIENT_ID names it). It returns the
// environment and the azurerm provider settings that select it.
func azureInjectedIdentity() (map[string]string, map[string]any) {
	env, _ := injectedIdentity(azureIdentityEnv)
	cfg := map[string]any{}
	if _, ok := env["AZURE_FEDERATED_TOKEN_FILE"]; ok {
		cfg["use_aks_workload_identity"] = true
		return env, cfg
	}
	cfg["use_msi"] = true
	if id, ok := env["AZURE_CLIENT_ID"]; ok {
		cfg["client_id"] = id
	}
	return map[string]string{}, cfg
}
