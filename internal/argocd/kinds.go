package argocd

import (
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// conditionsType is the type of status conditions.
var conditionsType = reflect.TypeFor[[]metav1.Condition]()

// WithConditions lists the Terraplane kinds of scheme (groups *terraplane.io) whose status
// holds conditions, but those in skip.
func WithConditions(scheme *runtime.Scheme, skip map[schema.GroupKind]bool) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	for gvk, t := range scheme.AllKnownTypes() {
		gk := gvk.GroupKind()
		if !strings.HasSuffix(gk.Group, "terraplane.io") || strings.HasSuffix(gk.Kind, "List") || skip[gk] || seen[gk] {
			continue
		}
		if status, ok := t.FieldByName("Status"); ok && holdsConditions(status.Type) {
			seen[gk] = true
			out = append(out, gk)
		}
	}
	return out
}

// holdsConditions reports whether struct t has a field of conditions, itself or in a
// struct it embeds.
func holdsConditions(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type == conditionsType || f.Anonymous && holdsConditions(f.Type) {
			return true
		}
	}
	return false
}
