package stackpkg

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
)

// Annotation keys the manager writes on a stack's CRDs (the seed's keys under stacks.terraplane.io/).
const (
	AnnotationPrefix              = "stacks.terraplane.io/"
	AnnotationStackTitle          = AnnotationPrefix + "stack-title"
	AnnotationGroupTitle          = AnnotationPrefix + "group-title"
	AnnotationGroupOverview       = AnnotationPrefix + "group-overview"
	AnnotationGroupOverviewShort  = AnnotationPrefix + "group-overview-short"
	AnnotationGroupReadme         = AnnotationPrefix + "group-readme"
	AnnotationResourceCategory    = AnnotationPrefix + "resource-category"
	AnnotationResourceTitle       = AnnotationPrefix + "resource-title"
	AnnotationResourceTitlePlural = AnnotationPrefix + "resource-title-plural"
	AnnotationResourceOverview    = AnnotationPrefix + "resource-overview"
	AnnotationResourceOverviewSh  = AnnotationPrefix + "resource-overview-short"
	AnnotationResourceReadme      = AnnotationPrefix + "resource-readme"
	AnnotationIconDataURI         = AnnotationPrefix + "icon-data-uri"
	AnnotationUISchema            = AnnotationPrefix + "ui-schema"
)

// ErrInvalid marks a package whose content is wrong (bad YAML, missing app.yaml).
var ErrInvalid = errors.New("invalid package")

// Package is a parsed stack package.
type Package struct {
	// App is app.yaml.
	App stacksv1.AppMetadataSpec
	// Install is install.yaml's controller Deployment, if any.
	Install *appsv1.Deployment
	// CRDs are the owned CRDs, annotated.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Modules maps a module name to its files (terraform/modules/NAME/FILE).
	Modules map[string]map[string]string
	// Objects are the classes and provider configs under terraform/classes/.
	Objects []*unstructured.Unstructured
}

// group is resources/**/group.yaml.
type group struct {
	Title         string `json:"title"`
	Overview      string `json:"overview"`
	OverviewShort string `json:"overviewShort"`
	Readme        string `json:"readme"`
}

// resourceMeta is resources/**/*resource.yaml.
type resourceMeta struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	TitlePlural   string `json:"titlePlural"`
	Category      string `json:"category"`
	Overview      string `json:"overview"`
	OverviewShort string `json:"overviewShort"`
	Readme        string `json:"readme"`
}

// iconTypes in the seed's preference order.
var iconTypes = []struct{ ext, media string }{
	{"svg", "image/svg+xml"}, {"png", "image/png"}, {"jpg", "image/jpeg"}, {"gif", "image/gif"},
}

var (
	moduleName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	moduleFile = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

// Parse reads a package's files. It never runs anything from the package.
func Parse(files Files) (*Package, error) {
	app, ok := files[Root+"/app.yaml"]
	if !ok {
		return nil, fmt.Errorf("%w: %s/app.yaml is missing", ErrInvalid, Root)
	}
	p := &Package{Modules: map[string]map[string]string{}}
	if err := yaml.Unmarshal(app, &p.App); err != nil {
		return nil, fmt.Errorf("%w: app.yaml: %v", ErrInvalid, err)
	}
	if p.App.PermissionScope == "" {
		p.App.PermissionScope = stacksv1.PermissionScopeNamespaced
	}
	if s := p.App.PermissionScope; s != stacksv1.PermissionScopeCluster && s != stacksv1.PermissionScopeNamespaced {
		return nil, fmt.Errorf("%w: app.yaml: permissionScope %q is neither Cluster nor Namespaced", ErrInvalid, s)
	}
	for _, d := range p.App.DependsOn {
		if err := CheckCRD(d.CRD); err != nil {
			return nil, fmt.Errorf("%w: app.yaml: dependsOn: %v", ErrInvalid, err)
		}
	}
	if icon := findIcon(files, Root+"/icon"); icon != nil {
		p.App.Icons = []stacksv1.Icon{*icon}
	}
	if b, ok := files[Root+"/install.yaml"]; ok {
		d := &appsv1.Deployment{}
		if err := yaml.UnmarshalStrict(b, d); err != nil || d.Kind != "Deployment" {
			return nil, fmt.Errorf("%w: install.yaml must be one apps/v1 Deployment (%v)", ErrInvalid, err)
		}
		if err := checkPodSpec(&d.Spec.Template.Spec); err != nil {
			return nil, err
		}
		p.Install = d
	}
	if err := p.parseResources(files); err != nil {
		return nil, err
	}
	if err := p.parseTerraform(files); err != nil {
		return nil, err
	}
	return p, nil
}

// parseResources reads the CRDs and annotates each from its directory's metadata files.
func (p *Package) parseResources(files Files) error {
	uiAll := string(files[Root+"/ui-schema.yaml"])
	seen := map[string]bool{}
	for _, name := range files.Names() {
		if !strings.HasPrefix(name, Root+"/resources/") || !strings.HasSuffix(name, "crd.yaml") {
			continue
		}
		crds, err := decodeCRDs(files[name])
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
		}
		for _, crd := range crds {
			if seen[crd.Name] {
				return fmt.Errorf("%w: CRD %s is defined twice", ErrInvalid, crd.Name)
			}
			seen[crd.Name] = true
			p.annotate(crd, files, path.Dir(name), uiAll)
			p.CRDs = append(p.CRDs, crd)
		}
	}
	return nil
}

func decodeCRDs(b []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := dec.Decode(crd)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if crd.Kind == "" && crd.Name == "" {
			continue // an empty document
		}
		if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s %q is not an apiextensions.k8s.io/v1 CustomResourceDefinition", crd.Kind, crd.Name)
		}
		if want := crd.Spec.Names.Plural + "." + crd.Spec.Group; crd.Name != want || len(crd.Spec.Versions) == 0 {
			return nil, fmt.Errorf("CRD %q must be named %q and have a version", crd.Name, want)
		}
		if ReservedGroup(crd.Spec.Group) {
			return nil, fmt.Errorf("CRD %s is in a %s; use your own domain", crd.Name, reservedGroups)
		}
		out = append(out, crd)
	}
}

// reservedGroups describes the groups ReservedGroup refuses, for messages.
const reservedGroups = "reserved group (terraplane.io, k8s.io, kubernetes.io, or a Kubernetes group without a domain such as apps)"

// ReservedGroup reports whether group belongs to Terraplane or Kubernetes itself: a
// stack may neither define CRDs there nor depend on them, which would grant its
// controller every verb on Terraplane's or Kubernetes' own kinds.
func ReservedGroup(group string) bool {
	if !strings.Contains(group, ".") {
		return true // the core group and Kubernetes' built-in ones (apps, batch, policy, ...)
	}
	for _, d := range []string{"terraplane.io", "k8s.io", "kubernetes.io"} {
		if group == d || strings.HasSuffix(group, "."+d) {
			return true
		}
	}
	return false
}

// annotate writes the seed's annotations from app.yaml, group.yaml, the matching
// *resource.yaml, and the kind-prefixed icon and ui-schema in the CRD's directory.
func (p *Package) annotate(crd *apiextensionsv1.CustomResourceDefinition, files Files, dir, uiAll string) {
	a := map[string]string{AnnotationStackTitle: p.App.Title}
	var g group
	if b, ok := files[dir+"/group.yaml"]; ok && yaml.Unmarshal(b, &g) == nil {
		a[AnnotationGroupTitle], a[AnnotationGroupOverview] = g.Title, g.Overview
		a[AnnotationGroupOverviewShort], a[AnnotationGroupReadme] = g.OverviewShort, g.Readme
	}
	kind := strings.ToLower(crd.Spec.Names.Kind)
	for _, name := range files.Names() {
		if path.Dir(name) != dir || !strings.HasSuffix(name, "resource.yaml") {
			continue
		}
		var r resourceMeta
		if yaml.Unmarshal(files[name], &r) == nil && r.ID != "" && matchesID(r.ID, crd) {
			a[AnnotationResourceTitle], a[AnnotationResourceTitlePlural] = r.Title, r.TitlePlural
			a[AnnotationResourceCategory], a[AnnotationResourceOverview] = r.Category, r.Overview
			a[AnnotationResourceOverviewSh], a[AnnotationResourceReadme] = r.OverviewShort, r.Readme
		}
	}
	if icon := findIconPrefixed(files, dir, kind); icon != nil {
		a[AnnotationIconDataURI] = "data:" + icon.MediaType + ";base64," + icon.Base64Data
	}
	ui := uiAll
	if b := findPrefixed(files, dir, kind, ".ui-schema.yaml"); b != nil {
		ui = strings.TrimSpace(strings.Join([]string{uiAll, string(b)}, "\n---\n"))
		ui = strings.TrimPrefix(ui, "---\n")
	}
	if ui != "" {
		a[AnnotationUISchema] = ui
	}
	if crd.Annotations == nil {
		crd.Annotations = map[string]string{}
	}
	for k, v := range a {
		if v != "" {
			crd.Annotations[k] = v
		}
	}
}

// matchesID reports whether a *resource.yaml id names crd: its kind, singular or plural,
// case-insensitively.
func matchesID(id string, crd *apiextensionsv1.CustomResourceDefinition) bool {
	n := crd.Spec.Names
	return strings.EqualFold(id, n.Kind) || strings.EqualFold(id, n.Singular) || strings.EqualFold(id, n.Plural)
}

// findIcon returns base.svg|png|jpg|gif, the first that exists.
func findIcon(files Files, base string) *stacksv1.Icon {
	for _, t := range iconTypes {
		if b, ok := files[base+"."+t.ext]; ok {
			return &stacksv1.Icon{MediaType: t.media, Base64Data: base64.StdEncoding.EncodeToString(b)}
		}
	}
	return nil
}

// findIconPrefixed returns DIR/*KIND.icon.EXT in preference order (case-insensitive kind).
func findIconPrefixed(files Files, dir, kind string) *stacksv1.Icon {
	for _, t := range iconTypes {
		if b := findPrefixed(files, dir, kind, ".icon."+t.ext); b != nil {
			return &stacksv1.Icon{MediaType: t.media, Base64Data: base64.StdEncoding.EncodeToString(b)}
		}
	}
	return nil
}

// findPrefixed returns the file in dir named KIND+suffix, the kind matched case-insensitively.
func findPrefixed(files Files, dir, kind, suffix string) []byte {
	for _, name := range files.Names() {
		base := path.Base(name)
		if path.Dir(name) == dir && strings.EqualFold(base, kind+suffix) {
			return files[name]
		}
	}
	return nil
}

// parseTerraform reads terraform/modules/NAME/FILE and terraform/classes/*.yaml.
func (p *Package) parseTerraform(files Files) error {
	for _, name := range files.Names() {
		rest, ok := strings.CutPrefix(name, Root+"/terraform/modules/")
		if !ok {
			continue
		}
		mod, file, ok := strings.Cut(rest, "/")
		if !ok || strings.Contains(file, "/") || !moduleName.MatchString(mod) || !moduleFile.MatchString(file) {
			return fmt.Errorf("%w: %s: modules are flat directories terraform/modules/NAME/FILE with DNS-label names", ErrInvalid, name)
		}
		if p.Modules[mod] == nil {
			p.Modules[mod] = map[string]string{}
		}
		p.Modules[mod][file] = string(files[name])
	}
	for _, name := range files.Names() {
		if !strings.HasPrefix(name, Root+"/terraform/classes/") || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		objs, err := decodeObjects(files[name])
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
		}
		p.Objects = append(p.Objects, objs...)
	}
	defined := definedGroups(p.Objects)
	for _, u := range p.Objects {
		if err := AllowedObject(u, defined); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	return nil
}

// definedGroups are the API groups the package's ClaimDefinitions define.
func definedGroups(objs []*unstructured.Unstructured) map[string]bool {
	groups := map[string]bool{}
	for _, u := range objs {
		if u.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apiextensions.terraplane.io", Kind: "ClaimDefinition"}) {
			if g, _, _ := unstructured.NestedString(u.Object, "spec", "group"); g != "" {
				groups[g] = true
			}
		}
	}
	return groups
}

// decodeObjects reads a multi-document file.
func decodeObjects(b []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		out = append(out, u)
	}
}

// AllowedObject accepts only Terraplane classes, terraform.terraplane.io ProviderConfigs,
// ClaimDefinitions and the classes of the groups those define (defined): nothing a
// package ships may run code, grant permissions or hold secrets.
func AllowedObject(u *unstructured.Unstructured, defined map[string]bool) error {
	gvk := u.GroupVersionKind()
	switch {
	case u.GetName() == "":
		return fmt.Errorf("a %s has no name", gvk.Kind)
	case gvk.Group == "terraform.terraplane.io" && (gvk.Kind == "ModuleClass" || gvk.Kind == "ProviderConfig"):
		return nil
	case gvk.Group == "apiextensions.terraplane.io" && gvk.Kind == "ClaimDefinition":
		return nil
	case defined[gvk.Group] && strings.HasSuffix(gvk.Kind, "Class"):
		return nil
	case strings.HasSuffix(gvk.Group, ".terraplane.io") && strings.HasSuffix(gvk.Kind, "Class") && !strings.HasPrefix(gvk.Group, "stacks."):
		return nil
	}
	return fmt.Errorf("%s %s/%s may not be shipped in a stack (only Terraplane classes, terraform ProviderConfigs and ClaimDefinitions)", gvk.Kind, gvk.Group, u.GetName())
}

// Owned returns the owned CRDs as plural.group/version, every served version.
func (p *Package) Owned() []string {
	var out []string
	for _, crd := range p.CRDs {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				out = append(out, crd.Name+"/"+v.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// DependsOn returns app.yaml's dependsOn CRDs.
func (p *Package) DependsOn() []string {
	out := make([]string, 0, len(p.App.DependsOn))
	for _, d := range p.App.DependsOn {
		out = append(out, d.CRD)
	}
	return out
}

// SplitCRD splits plural.group/version into its parts; plural may be "*".
func SplitCRD(s string) (plural, group, version string, err error) {
	name, version, ok := strings.Cut(s, "/")
	plural, group, ok2 := strings.Cut(name, ".")
	if !ok || !ok2 || plural == "" || group == "" || version == "" {
		return "", "", "", fmt.Errorf("%q is not plural.group/version", s)
	}
	return plural, group, version, nil
}

// CheckCRD refuses a CRD name/version (plural.group/version) that is malformed or in a
// reserved group (ReservedGroup).
func CheckCRD(s string) error {
	_, group, _, err := SplitCRD(s)
	if err != nil {
		return err
	}
	if ReservedGroup(group) {
		return fmt.Errorf("%q is in a %s", s, reservedGroups)
	}
	return nil
}

// Matches reports whether the CRD name/version crd (plural.group/version) satisfies the
// dependency dep, which may use a wildcard plural.
func Matches(dep, crd string) bool {
	dp, dg, dv, err := SplitCRD(dep)
	if err != nil {
		return false
	}
	cp, cg, cv, err := SplitCRD(crd)
	if err != nil {
		return false
	}
	return dg == cg && dv == cv && (dp == "*" || dp == cp)
}
