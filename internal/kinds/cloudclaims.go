package kinds

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	azurev1 "terraplane.io/terraplane/apis/azure/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	gcpv1 "terraplane.io/terraplane/apis/gcp/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/tfmodules"

	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// cloud is what the bundled kinds of one cloud share: its Provider kind and how that
// Provider becomes a provider block and environment.
type cloud struct {
	provider schema.GroupVersionKind
	resolve  registry.ProviderResolver
}

// The clouds of the bundled kinds (S3Bucket, the first AWS kind, is registered on its own).
var (
	awsCloud   = cloud{awsv1.ProviderGroupVersionKind, resolveAWSProvider}
	gcpCloud   = cloud{gcpv1.ProviderGroupVersionKind, resolveGCPProvider}
	azureCloud = cloud{azurev1.ProviderGroupVersionKind, resolveAzureProvider}
)

// kind is the registration of a bundled cloud kind: its module, the cloud's Provider,
// recovery of an interrupted create by the names the resource fixes, and no Provider
// credential in any connection Secret.
func (c cloud) kind(gvk, class schema.GroupVersionKind, dir string, keys map[string]string, recover recoverFunc, meets map[schema.GroupVersionKind]registry.Configurator) registry.ManagedKind {
	return registry.ManagedKind{
		GVK: gvk, ClassGVK: class, ProviderGVK: c.provider, Meets: meets,
		Terraform: &registry.TerraformKind{Modules: tfmodules.FS, ModuleDir: dir, ResolveProvider: c.resolve,
			ConnectionKeys: keys, RecoverCreate: recover},
	}
}

// fillCloudDatabase maps a database claim's portable fields onto a kind that makes a
// server of its own: the claim's engineVersion where the class leaves it open (refused
// where the class fixes another), at least the claim's storage (never below minGB), and
// high availability when asked for. Every cloud here encrypts storage at rest, so
// encryption needs nothing.
func fillCloudDatabase(engine, class string, want databasev1.DatabaseParameters, version *string, storageGB *int32, minGB int32, ha *bool) error {
	if want.EngineVersion != "" {
		if *version != "" && !versionMatches(want.EngineVersion, *version) {
			return resource.UserErrorf("ClassCannotSatisfy", "class %s offers %s %s, but the claim asks for engineVersion %s; pick another class or version",
				class, engine, *version, want.EngineVersion)
		}
		if *version == "" {
			*version = want.EngineVersion
		}
	}
	if want.StorageGB > *storageGB {
		*storageGB = max(want.StorageGB, minGB)
	}
	*ha = *ha || want.HighAvailability
	return nil
}

// fillCluster maps a KubernetesCluster claim onto a cloud cluster kind: the claim's
// version where the class leaves it open (refused where it fixes another), its node
// count, and a name of at most maxName characters derived from the claim.
func fillCluster(claim *computev1.KubernetesCluster, class string, version *string, nodeCount *int32, name *string, maxName int) error {
	want := claim.Spec.KubernetesClusterParameters
	if err := fillVersion("Kubernetes", class, want.Version, version); err != nil {
		return err
	}
	if want.NodeCount > 0 {
		*nodeCount = want.NodeCount
	}
	if *name == "" {
		*name = DNSName(claim.Namespace, claim.Name, string(claim.UID), maxName)
	}
	return nil
}

// fillVersion takes the claim's version where the class leaves it open, and refuses a
// claim whose version the class's does not match.
func fillVersion(what, class, want string, offered *string) error {
	if want == "" {
		return nil
	}
	if *offered != "" && !versionMatches(want, *offered) {
		return resource.UserErrorf("ClassCannotSatisfy", "class %s offers %s %s, but the claim asks for %s; pick another class or version", class, what, *offered, want)
	}
	if *offered == "" {
		*offered = want
	}
	return nil
}

var notNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// DNSName derives a unique name of at most max lowercase letters, digits and hyphens,
// starting with a letter, from a claim: what most cloud resources take as a name.
func DNSName(namespace, name, uid string, max int) string {
	base := strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(namespace+"-"+name), "-"), "-")
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "tp-" + base
	}
	suffix := uidSuffix(uid)
	if m := max - len(suffix) - 1; len(base) > m {
		base = base[:m]
	}
	return strings.TrimRight(base, "-") + "-" + suffix
}

var notAlphanumeric = regexp.MustCompile(`[^a-z0-9]+`)

// CompactName derives a unique name of at most max lowercase letters and digits from a
// claim, such as an Azure storage account's.
func CompactName(namespace, name, uid string, max int) string {
	base := notAlphanumeric.ReplaceAllString(strings.ToLower(namespace+name), "")
	suffix := uidSuffix(uid)
	if m := max - len(suffix); len(base) > m {
		base = base[:m]
	}
	return base + suffix
}

// uidSuffix is the first 8 hex digits of a UID: what keeps derived names unique.
func uidSuffix(uid string) string {
	s := strings.ReplaceAll(uid, "-", "")
	return s[:min(len(s), 8)]
}

var notLabelChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// gcpLabels merges a claim's tags into labels as Google Cloud takes them: lowercase
// letters, digits, _ and -, keys starting with a letter, at most 63 characters each.
func gcpLabels(labels, tags map[string]string) map[string]string {
	if len(tags) == 0 {
		return labels
	}
	if labels == nil {
		labels = map[string]string{}
	}
	clean := func(s string) string {
		s = notLabelChars.ReplaceAllString(strings.ToLower(s), "_")
		return s[:min(len(s), 63)]
	}
	for k, v := range tags {
		key := clean(k)
		if key == "" || key[0] < 'a' || key[0] > 'z' {
			key = clean("t_" + key)
		}
		labels[key] = clean(v)
	}
	return labels
}
