package moduleclass

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
)

const awsTF = `terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}
`

// TestProvidersAndSubmodules: a class is not Ready while a provider its module (or a
// local module it calls) needs is configured by no ProviderConfig the class names, nor
// while a local module it calls is missing from its files (a flat ConfigMap). Providers
// that take no configuration (random) need none. A stub ProviderConfig, marked so
// until someone fills it in, configures nothing yet.
func TestProvidersAndSubmodules(t *testing.T) {
	valid := checked{Synced: "True", SyncedReason: ReasonRead, Ready: "True", ReadyReason: ReasonValid,
		Variables: []string{"name", "size"}, Outputs: []string{"id"}, Read: true, Observed: true}
	invalid := func(reason string) checked {
		return checked{Synced: "True", SyncedReason: ReasonRead, Ready: "False", ReadyReason: reason, Stalled: reason, Observed: true,
			Variables: []string{"name", "size"}, Outputs: []string{"id"}, Read: true, Events: []string{"Warning " + reason}}
	}
	withRefs := func(refs ...string) *terraformv1.ModuleClass {
		c := newClass(`{"name": "a"}`)
		for _, r := range refs {
			c.SpecTemplate.ProviderConfigRefs = append(c.SpecTemplate.ProviderConfigRefs, common.LocalReference{Name: r})
		}
		return c
	}
	pc := func(name, source string) *terraformv1.ProviderConfig {
		return &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: definitionNamespace, Name: name},
			Spec: terraformv1.ProviderConfigSpec{Source: source}}
	}
	tarball := func(files map[string]string) client.Object {
		return moduleTarball(t, files)
	}
	cases := map[string]struct {
		objs []client.Object
		want checked
	}{
		"aws needed, no ProviderConfig named": {
			objs: []client.Object{withRefs(), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": awsTF})},
			want: invalid(ReasonProviderNotConfigured),
		},
		"aws needed, a ProviderConfig of another provider": {
			objs: []client.Object{withRefs("random"), pc("random", "hashicorp/random"), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": awsTF})},
			want: invalid(ReasonProviderNotConfigured),
		},
		"aws needed, a ProviderConfig named that does not exist": {
			objs: []client.Object{withRefs("aws"), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": awsTF})},
			want: invalid(ReasonProviderNotConfigured),
		},
		"aws configured": {
			objs: []client.Object{withRefs("aws"), pc("aws", "hashicorp/aws"), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": awsTF})},
			want: valid,
		},
		"aws configured by a stub claim generate wrote, not yet filled in": {
			objs: []client.Object{withRefs("aws"), func() client.Object {
				stub := pc("aws", "hashicorp/aws")
				stub.Annotations = map[string]string{terraformv1.StubAnnotation: "true"}
				return stub
			}(), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": awsTF})},
			want: invalid(ReasonProviderNotConfigured),
		},
		"random needs no configuration": {
			objs: []client.Object{withRefs(), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": randomTF})},
			want: valid,
		},
		"a local module missing from a flat ConfigMap": {
			objs: []client.Object{withRefs(), moduleConfigMap(map[string]string{"main.tf": mainTF + `module "vpc" { source = "./modules/vpc" }`})},
			want: invalid(ReasonModuleIncomplete),
		},
		"a local module in a tarball that needs aws": {
			objs: []client.Object{withRefs(), tarball(map[string]string{"main.tf": mainTF + `module "vpc" { source = "./modules/vpc" }`,
				"modules/vpc/main.tf": awsTF})},
			want: invalid(ReasonProviderNotConfigured),
		},
		"a local module in a tarball, aws configured": {
			objs: []client.Object{withRefs("aws"), pc("aws", "hashicorp/aws"), tarball(map[string]string{"main.tf": mainTF + `module "vpc" { source = "./modules/vpc" }`,
				"modules/vpc/main.tf": awsTF})},
			want: valid,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, run(t, 1, nil, nil, tc.objs...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// moduleTarball is the ConfigMap db-module holding files as module.tar.gz.
func moduleTarball(t *testing.T, files map[string]string) *corev1.ConfigMap {
	t.Helper()
	raw := map[string][]byte{}
	for n, c := range files {
		raw[n] = []byte(c)
	}
	tgz, err := modsource.WriteTarball(raw)
	if err != nil {
		t.Fatal(err)
	}
	cm := moduleConfigMap(nil)
	cm.BinaryData = map[string][]byte{"module.tar.gz": tgz}
	return cm
}
