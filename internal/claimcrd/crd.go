package claimcrd

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
)

// Version of every defined kind.
const Version = "v1alpha1"

// DefinitionLabel names the ClaimDefinition a generated CRD belongs to.
const DefinitionLabel = "apiextensions.terraplane.io/claim-definition"

// Claim rules every claim kind shares (as the compiled-in kinds' CRDs carry them).
var claimRules = apiextensionsv1.ValidationRules{
	{
		Rule:    "!(has(oldSelf.status) && has(oldSelf.status.bindingPhase) && oldSelf.status.bindingPhase == 'Bound') || (has(self.spec) && has(oldSelf.spec) && has(self.spec.resourceRef) == has(oldSelf.spec.resourceRef) && (!has(self.spec.resourceRef) || self.spec.resourceRef == oldSelf.spec.resourceRef))",
		Message: "spec.resourceRef is immutable once the claim is Bound; to use another resource, delete this claim (the reclaim policy decides what happens to the bound one) and create a new claim",
	},
	{
		Rule:    "!(has(oldSelf.status) && has(oldSelf.status.bindingPhase) && oldSelf.status.bindingPhase == 'Bound') || (has(self.spec) && has(oldSelf.spec) && has(self.spec.classRef) == has(oldSelf.spec.classRef) && (!has(self.spec.classRef) || self.spec.classRef == oldSelf.spec.classRef)) || (has(self.spec) && has(self.spec.classRef) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Synced' && c.reason == 'ClassNotFound'))",
		Message: "spec.classRef is immutable once the claim is Bound, because another class would reconfigure the bound resource (its reclaim policy, for one); it may name another class only while the claim reports ClassNotFound. To change class, create a new claim",
	},
}

// ClaimCRD is the namespaced claim kind of def, with spec.parameters as params.
func ClaimCRD(def *apiextv1.ClaimDefinition, params apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	n := def.Spec.Names
	spec := object("The claim's desired state.", map[string]apiextensionsv1.JSONSchemaProps{
		"classRef":                   ref("ClassRef names a portable class in the claim's namespace. When omitted, the namespace's default class (label terraplane.io/default: \"true\") is written here.", "name"),
		"resourceRef":                ref("ResourceRef names the managed resource bound to this claim. Set it yourself to bind statically to an existing resource.", "name", "apiVersion", "kind", "namespace", "uid"),
		"writeConnectionSecretToRef": ref("WriteConnectionSecretToRef names the Secret in the claim's namespace that receives the connection details.", "name"),
		"poolRef": ref("PoolRef names a ResourcePool (scaling.terraplane.io) in the claim's namespace whose claims are of this kind: an unbound claim takes one of its ready members at once, and is provisioned from the pool's class when none is ready.",
			"name", "namespace"),
		"parameters": params,
	})
	if len(params.Required) > 0 {
		spec.Required = []string{"parameters"}
	} else {
		spec.Default = &apiextensionsv1.JSON{Raw: []byte("{}")}
	}
	root := object(n.Kind+" is a claim defined by ClaimDefinition "+def.Name+".", map[string]apiextensionsv1.JSONSchemaProps{
		"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
		"spec":   spec,
		"status": claimStatus(),
	})
	root.XValidations = claimRules
	cols := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "STATUS", Type: "string", JSONPath: ".status.bindingPhase"},
		{Name: "CLASS", Type: "string", JSONPath: ".spec.classRef.name"},
		{Name: "RESOURCE", Type: "string", JSONPath: ".spec.resourceRef.name"},
		{Name: "READY", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "SYNCED", Type: "string", JSONPath: `.status.conditions[?(@.type=="Synced")].status`},
		{Name: "AGE", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
	names := apiextensionsv1.CustomResourceDefinitionNames{Kind: n.Kind, ListKind: n.Kind + "List", Plural: n.Plural,
		Singular: strings.ToLower(n.Kind), ShortNames: n.ShortNames, Categories: categories(n.Categories, "terraplane", "claim")}
	return crd(def, names, root, cols)
}

// ClassCRD is the portable class kind of def.
func ClassCRD(def *apiextv1.ClaimDefinition) *apiextensionsv1.CustomResourceDefinition {
	kind := def.ClassKindName()
	classRef := ref("ClassRef points at the non-portable class (a ModuleClass, say) that makes the resources of claims of this class.",
		"apiVersion", "kind", "name", "namespace")
	classRef.Required = []string{"apiVersion", "kind", "name"}
	root := object(kind+" is a class of service for "+def.Spec.Names.Kind+" claims.", map[string]apiextensionsv1.JSONSchemaProps{
		"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
		"classRef": classRef,
		"bindingMode": {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"Immediate"`)},
			Description: "BindingMode Immediate (default) provisions claims at once; WaitForFirstConsumer waits until an application using the claim's connection Secret is scheduled.",
			Enum:        []apiextensionsv1.JSON{{Raw: []byte(`"Immediate"`)}, {Raw: []byte(`"WaitForFirstConsumer"`)}}},
	})
	root.Required = []string{"classRef"}
	root.XValidations = apiextensionsv1.ValidationRules{{
		Rule: "!has(oldSelf.bindingMode) || (has(self.bindingMode) && self.bindingMode == oldSelf.bindingMode)", Message: "bindingMode is immutable; create a new class"}}
	cols := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "CLASS-KIND", Type: "string", JSONPath: ".classRef.kind"},
		{Name: "CLASS-NAME", Type: "string", JSONPath: ".classRef.name"},
		{Name: "BINDING-MODE", Type: "string", JSONPath: ".bindingMode"},
		{Name: "DEFAULT", Type: "string", JSONPath: `.metadata.labels.terraplane\.io/default`},
		{Name: "AGE", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
	plural := strings.ToLower(kind) + "s"
	if strings.HasSuffix(kind, "s") {
		plural = strings.ToLower(kind) + "es" // ...Class → ...classes
	}
	names := apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural,
		Singular: strings.ToLower(kind), Categories: []string{"terraplane", "class"}}
	return crd(def, names, root, cols)
}

// Parameters is the spec.parameters schema of a generated claim CRD.
func Parameters(c *apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.JSONSchemaProps, bool) {
	for _, v := range c.Spec.Versions {
		if v.Name == Version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			p, ok := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["parameters"]
			return p, ok
		}
	}
	return apiextensionsv1.JSONSchemaProps{}, false
}

func crd(def *apiextv1.ClaimDefinition, names apiextensionsv1.CustomResourceDefinitionNames, root apiextensionsv1.JSONSchemaProps,
	cols []apiextensionsv1.CustomResourceColumnDefinition) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: names.Plural + "." + def.Spec.Group, Labels: map[string]string{DefinitionLabel: def.Name}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: def.Spec.Group, Names: names, Scope: apiextensionsv1.NamespaceScoped,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: Version, Served: true, Storage: true,
				Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &root},
				Subresources:             &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: cols,
			}},
		},
	}
}

func claimStatus() apiextensionsv1.JSONSchemaProps {
	cond := object("A condition.", map[string]apiextensionsv1.JSONSchemaProps{
		"type": {Type: "string"}, "status": {Type: "string"}, "observedGeneration": {Type: "integer", Format: "int64"},
		"lastTransitionTime": {Type: "string", Format: "date-time"}, "reason": {Type: "string"}, "message": {Type: "string"},
	})
	cond.Required = []string{"type", "status"}
	return object("The claim's observed state.", map[string]apiextensionsv1.JSONSchemaProps{
		"bindingPhase": {Type: "string", Description: "BindingPhase of the claim.",
			Enum: []apiextensionsv1.JSON{{Raw: []byte(`"Unbound"`)}, {Raw: []byte(`"Bound"`)}, {Raw: []byte(`"Released"`)}}},
		"observedGeneration": {Type: "integer", Format: "int64", Description: "The claim generation whose changes have been applied to its resource."},
		"conditions": {Type: "array", Description: "Conditions Ready and Synced, and Reconciling and Stalled as kstatus reads them.",
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &cond}, XListType: ptr("map"), XListMapKeys: []string{"type"}},
	})
}

// ref is an object of string fields, the first required.
func ref(desc string, fields ...string) apiextensionsv1.JSONSchemaProps {
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	one := int64(1)
	for i, f := range fields {
		p := apiextensionsv1.JSONSchemaProps{Type: "string"}
		if i == 0 {
			p.MinLength = &one
		}
		props[f] = p
	}
	o := object(desc, props)
	o.Required = fields[:1]
	return o
}

func object(desc string, props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "object", Description: desc, Properties: props}
}

func categories(extra []string, base ...string) []string {
	out := base
	for _, c := range extra {
		if !slicesContains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func slicesContains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
