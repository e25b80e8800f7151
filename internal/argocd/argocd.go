package argocd

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"terraplane.io/terraplane/internal/registry"
)

// Family is a group of kinds that share one health script, named as its file.
type Family string

// The families of Terraplane kinds.
const (
	// Claims: claim kinds (claim.lua).
	Claims Family = "claim"
	// Managed: managed resource kinds, Terraform-backed or native (managed.lua).
	Managed Family = "managed"
	// Ready: every other kind that reports conditions: ModuleClass and the other
	// non-portable classes of Terraform kinds (their rollouts), Providers and
	// ProviderConfigs, ClaimDefinition, stacks and workloads (ready.lua).
	Ready Family = "ready"
)

// Families lists the families, each with its script's file name.
var Families = []Family{Claims, Managed, Ready}

// File is the name of f's script in charts/terraplane/argocd.
func (f Family) File() string { return string(f) + ".lua" }

// Kind is one kind and the family whose script Argo CD runs for it.
type Kind struct {
	GroupKind schema.GroupKind
	Family    Family
}

// Key is the argocd-cm key of k's health script.
func (k Kind) Key() string {
	return "resource.customizations.health." + k.GroupKind.Group + "_" + k.GroupKind.Kind
}

// Kinds lists the kinds of reg and the other kinds with conditions (others), each with
// its family, sorted by group and kind. Kinds without conditions (portable classes,
// ObjectClass, ClassRevision, Plan) need no script: Argo CD reads them healthy.
func Kinds(reg *registry.Registry, others []schema.GroupKind) []Kind {
	var out []Kind
	for _, k := range reg.ClaimKinds() {
		if !k.Defined {
			out = append(out, Kind{k.GVK.GroupKind(), Claims})
		}
	}
	for _, k := range reg.ManagedKinds() {
		out = append(out, Kind{k.GVK.GroupKind(), Managed})
	}
	for _, gk := range others {
		out = append(out, Kind{gk, Ready})
	}
	slices.SortFunc(out, func(a, b Kind) int {
		return cmp.Or(cmp.Compare(a.GroupKind.Group, b.GroupKind.Group), cmp.Compare(a.GroupKind.Kind, b.GroupKind.Kind))
	})
	return out
}

// All lists every kind of reg (claims, managed resources) and every other Terraplane kind
// of its scheme that reports conditions, each with its family.
func All(reg *registry.Registry) []Kind {
	skip := map[schema.GroupKind]bool{}
	for _, k := range reg.ManagedKinds() {
		skip[k.GVK.GroupKind()] = true
	}
	for _, k := range reg.ClaimKinds() {
		skip[k.GVK.GroupKind()] = true
	}
	return Kinds(reg, WithConditions(reg.Scheme(), skip))
}

// FamilyOf is the family of gk among kinds; Ready for a kind not among them.
func FamilyOf(kinds []Kind, gk schema.GroupKind) Family {
	for _, k := range kinds {
		if k.GroupKind == gk {
			return k.Family
		}
	}
	return Ready
}

// PreludeFile is the Lua the claim and managed scripts start with (the conditions by
// type, how one reads, and the states both read alike): Argo CD runs each script on its
// own, so the prelude is written ahead of each.
const PreludeFile = "prelude.lua"

// Preluded reports whether f's script starts with the prelude.
func (f Family) Preluded() bool { return f == Claims || f == Managed }

// ReadScripts reads the families' scripts from dir (charts/terraplane/argocd), each
// whole: the prelude (for the families that take it), then the family's own file.
func ReadScripts(dir string) (map[Family]string, error) {
	prelude, err := os.ReadFile(filepath.Join(dir, PreludeFile))
	if err != nil {
		return nil, fmt.Errorf("read health script prelude: %w", err)
	}
	out := map[Family]string{}
	for _, f := range Families {
		b, err := os.ReadFile(filepath.Join(dir, f.File()))
		if err != nil {
			return nil, fmt.Errorf("read health script: %w", err)
		}
		if f.Preluded() {
			b = slices.Concat(prelude, b)
		}
		out[f] = string(b)
	}
	return out, nil
}

// ConfigMap renders the argocd-cm entries of kinds as a ConfigMap to merge into Argo
// CD's: one resource.customizations.health.<group>_<kind> key per kind, holding its
// family's script (scripts, by family).
func ConfigMap(kinds []Kind, scripts map[Family]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`# Argo CD health checks of every Terraplane kind, to merge into the argocd-cm ConfigMap of
# Argo CD's namespace (docs/gitops.md says how). Generated from the scripts beside this
# file: go test ./internal/argocd -update
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
`)
	for _, k := range kinds {
		script, ok := scripts[k.Family]
		if !ok {
			return nil, fmt.Errorf("no %s script for %s", k.Family, k.GroupKind)
		}
		fmt.Fprintf(&b, "  %s: |\n", k.Key())
		for _, line := range strings.Split(strings.TrimRight(script, "\n"), "\n") {
			if line == "" {
				b.WriteString("\n")
				continue
			}
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	return b.Bytes(), nil
}
