package image

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Labels the image carries besides the org.opencontainers.image ones.
const (
	// LabelTerraform names the terraform binary the image bundles: terraform or tofu.
	LabelTerraform = "io.terraplane.terraform"
	// LabelTerraformLicence says in a sentence what that binary's licence means for whoever
	// runs or passes on the image.
	LabelTerraformLicence = "io.terraplane.terraform.licence"
	// LabelLicenses is the SPDX expression of everything the image bundles.
	LabelLicenses = "org.opencontainers.image.licenses"
)

// terraplaneLicence is Terraplane's own licence (LICENSE).
const terraplaneLicence = "Apache-2.0"

// binaryLicence is the licence of a terraform binary the image may bundle.
type binaryLicence struct{ spdx, notice string }

// binaryLicences are those of the binaries the image may bundle, by name.
var binaryLicences = map[string]binaryLicence{
	"tofu": {"MPL-2.0", "OpenTofu is under the Mozilla Public License 2.0: run, copy and pass on this image freely; " +
		"changes to OpenTofu's own files are shared under the same licence."},
	"terraform": {"BUSL-1.1", "terraform (1.6 and later) is under HashiCorp's Business Source License 1.1: use inside your " +
		"organisation is allowed; offering this image, or a product or service built on it, to others in competition with " +
		"HashiCorp's paid products is not; each terraform version becomes MPL-2.0 four years after its release. " +
		"The default image bundles OpenTofu (MPL-2.0), which has no such limit."},
}

// terraformLicence is the licence of the binary named name, or an error when the image
// cannot say what it is.
func terraformLicence(name string) (binaryLicence, error) {
	l, ok := binaryLicences[name]
	if !ok {
		return binaryLicence{}, fmt.Errorf("the terraform binary is named %q: name it terraform or tofu (the image's licence labels and the controller's default depend on which)", name)
	}
	return l, nil
}

// providerLicences are the SPDX licences of the providers among entries (paths under
// Mirror: host/namespace/type/version/platform/file): MPL-2.0 for HashiCorp's, a
// LicenseRef naming the provider for others, whose licence the image cannot know.
func providerLicences(entries []entry) []string {
	seen := map[string]bool{}
	for _, e := range entries {
		parts := strings.Split(strings.TrimPrefix(e.Path, Mirror+"/"), "/")
		if len(parts) < 3 {
			continue
		}
		seen[ProviderLicence(parts[1], parts[2])] = true
	}
	var out []string
	for l := range seen {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// TerraformLicence is the SPDX licence of the terraform binary named name (tofu or
// terraform), or "" when the image cannot say.
func TerraformLicence(name string) string { return binaryLicences[name].spdx }

// ProviderLicence is the SPDX licence of the provider namespace/typ: MPL-2.0 for
// HashiCorp's, else a LicenseRef naming the provider, whose licence the image cannot know.
func ProviderLicence(namespace, typ string) string {
	if namespace == "hashicorp" {
		return "MPL-2.0"
	}
	return "LicenseRef-terraform-provider-" + namespace + "-" + typ
}

// labels are the image's labels: title, version, revision, source and licences (the
// org.opencontainers.image ones), and which terraform and providers it bundles.
func (o Options) labels(tfName string, tf binaryLicence, providers []string) map[string]string {
	licences := []string{terraplaneLicence}
	for _, l := range append([]string{tf.spdx}, providers...) {
		if !slices.Contains(licences, l) {
			licences = append(licences, l)
		}
	}
	labels := map[string]string{
		"org.opencontainers.image.title": "terraplane",
		LabelLicenses:                    strings.Join(licences, " AND "),
		LabelTerraform:                   tfName,
		LabelTerraformLicence:            tf.notice,
		"io.terraplane.providers":        strings.Join(o.Providers, ","),
	}
	for key, v := range map[string]string{"version": o.Version, "revision": o.Revision, "source": o.Source} {
		if v != "" {
			labels["org.opencontainers.image."+key] = v
		}
	}
	return labels
}
