package planpolicy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apiservercel "k8s.io/apiserver/pkg/cel"
)

// typePrefix qualifies the names of the types of plan and namespaceObject: a type's
// name, and the paths below it, must not read as a rule's expression (plan.x).
const typePrefix = "terraplane.planpolicy."

// changeFields are the fields of a resource change's change (terraform's plan JSON);
// the values before and after are the resource's, so dynamic.
var changeFields = map[string]*apiservercel.DeclType{
	"actions":          apiservercel.NewListType(apiservercel.StringType, -1),
	"before":           apiservercel.DynType,
	"after":            apiservercel.DynType,
	"after_unknown":    apiservercel.DynType,
	"before_sensitive": apiservercel.DynType,
	"after_sensitive":  apiservercel.DynType,
	"replace_paths":    apiservercel.DynType,
	"importing":        apiservercel.DynType,
	"generated_config": apiservercel.StringType,
	"before_identity":  apiservercel.DynType,
	"after_identity":   apiservercel.DynType,
}

// resourceChangeFields are the fields of one of plan.resource_changes.
var resourceChangeFields = map[string]*apiservercel.DeclType{
	"address":          apiservercel.StringType,
	"previous_address": apiservercel.StringType,
	"module_address":   apiservercel.StringType,
	"mode":             apiservercel.StringType,
	"type":             apiservercel.StringType,
	"name":             apiservercel.StringType,
	"index":            apiservercel.DynType,
	"provider_name":    apiservercel.StringType,
	"deposed":          apiservercel.StringType,
	"action_reason":    apiservercel.StringType,
	"change":           object(typePrefix+"Change", changeFields),
}

// planType is the type of plan: {resource_changes: [...]}, each change with the fields
// of terraform's plan JSON.
func planType() *apiservercel.DeclType {
	rc := object(typePrefix+"ResourceChange", resourceChangeFields)
	return object(typePrefix+"Plan", map[string]*apiservercel.DeclType{"resource_changes": apiservercel.NewListType(rc, -1)})
}

// namespaceType is the type of namespaceObject: its name and labels.
func namespaceType() *apiservercel.DeclType {
	meta := object(typePrefix+"NamespaceMetadata", map[string]*apiservercel.DeclType{
		"name":   apiservercel.StringType,
		"labels": apiservercel.NewMapType(apiservercel.StringType, apiservercel.StringType, -1),
	})
	return object(typePrefix+"Namespace", map[string]*apiservercel.DeclType{"metadata": meta})
}

// object is an object type of optional fields.
func object(name string, fields map[string]*apiservercel.DeclType) *apiservercel.DeclType {
	decl := make(map[string]*apiservercel.DeclField, len(fields))
	for f, t := range fields {
		decl[f] = apiservercel.NewDeclField(f, t, false, nil, nil)
	}
	return apiservercel.NewObjectType(name, decl)
}

// fieldHint names the fields a typed variable has, for a compile error about a field
// it lacks ("undefined field").
func fieldHint(msg string) string {
	if !strings.Contains(msg, "undefined field") {
		return ""
	}
	return fmt.Sprintf("plan.resource_changes[] has %s; its change has %s (their before and after are the resource's own fields); namespaceObject has metadata.name and metadata.labels",
		strings.Join(slices.Sorted(maps.Keys(resourceChangeFields)), ", "), strings.Join(slices.Sorted(maps.Keys(changeFields)), ", "))
}
