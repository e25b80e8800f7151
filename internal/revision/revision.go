package revision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// ClassLabel names, on a ClassRevision, the UID of the class it belongs to.
const ClassLabel = "terraplane.io/class-uid"

// ReasonRevisionNotFound: a resource names a revision of its class that does not exist.
const ReasonRevisionNotFound = "RevisionNotFound"

// Class is a non-portable class whose revisions are kept.
type Class interface {
	resource.NonPortableClass
	// GetClassRevisions returns the class's revisions.
	GetClassRevisions() *common.ClassRevisions
	// GetClassConditions returns the class's conditions.
	GetClassConditions() *[]metav1.Condition
}

// Makeable reports whether a revision of class may be made now: a ModuleClass's only once
// it is Ready (its module known to be usable), any other class's at once.
func Makeable(class client.Object) bool {
	mc, ok := class.(*terraformv1.ModuleClass)
	return !ok || meta.IsStatusConditionTrue(mc.Status.Conditions, common.TypeReady)
}

// FirstDue reports whether class has made no revision yet but is about to make its first:
// a resource made from it now would run without one, then move to it at once.
func FirstDue(class Class) bool {
	return class.GetClassRevisions().LatestRevision == "" && Makeable(class)
}

// notInTemplate are the specTemplate fields that say how resources follow revisions,
// not what they run: changing them makes no revision.
var notInTemplate = []string{"revisionPolicy", "rollout"}

// Template is class's specTemplate as a revision keeps it.
func Template(class client.Object) (map[string]any, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(class)
	if err != nil {
		return nil, fmt.Errorf("read class template: %w", err)
	}
	tmpl, _ := obj["specTemplate"].(map[string]any)
	tmpl = maps.Clone(tmpl)
	if tmpl == nil {
		tmpl = map[string]any{}
	}
	for _, k := range notInTemplate {
		delete(tmpl, k)
	}
	return tmpl, nil
}

// Hash is the content hash that names a revision of the class kind/name: its template, the
// module's files and the module's lock, and the specs of its ProviderConfigs.
func Hash(kind, name string, template []byte, mod *module.Module, providers []terraformv1.RevisionProviderConfig) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", kind, name, len(template))
	h.Write(template)
	files := mod.Tree() // a module that keeps its source tree: all of it, and where it lives
	for _, f := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(files[f]))
		h.Write(files[f])
	}
	fmt.Fprintf(h, "lock\x00%d\x00", len(mod.Lock))
	h.Write(mod.Lock)
	for _, pc := range providers { // none: the hash a revision made before they were kept has
		fmt.Fprintf(h, "provider\x00%s\x00%d\x00", pc.Name, len(pc.Spec.Raw))
		h.Write(pc.Spec.Raw)
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}

// maxNamePrefix keeps a revision's name (class name, "-", hash) within 253 characters.
const maxNamePrefix = 253 - 11

// Name is the name of the revision of class name with hash.
func Name(class, hash string) string {
	if len(class) > maxNamePrefix {
		class = class[:maxNamePrefix]
	}
	return class + "-" + hash
}

// Build is the revision number of class (of kind gvk) running mod with the ProviderConfigs
// providers (sorted by name, see SnapshotProviderConfigs).
func Build(class client.Object, gvk schema.GroupVersionKind, mod *module.Module, providers []terraformv1.RevisionProviderConfig, number int64) (*terraformv1.ClassRevision, error) {
	tmpl, err := Template(class)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(tmpl) // keys sorted: the same template, the same bytes
	if err != nil {
		return nil, fmt.Errorf("encode class template: %w", err)
	}
	tgz, err := modsource.WriteTarball(mod.Tree())
	if err != nil {
		return nil, fmt.Errorf("pack the module: %w", err)
	}
	hash := Hash(gvk.Kind, class.GetName(), raw, mod, providers)
	rev := &terraformv1.ClassRevision{
		ObjectMeta: metav1.ObjectMeta{Name: Name(class.GetName(), hash), Namespace: class.GetNamespace(),
			Labels: map[string]string{ClassLabel: string(class.GetUID())}},
		Spec: terraformv1.ClassRevisionSpec{
			ClassRef: common.ClassReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: class.GetName()},
			Revision: number, Hash: hash, Template: &apiextensionsv1.JSON{Raw: raw}, Module: tgz, ProviderLock: string(mod.Lock),
			ProviderConfigs: providers,
		},
	}
	return rev, nil
}

// Get reads revision name of class (kind, name) in namespace ns; one that is missing, or
// that another class made, is a RevisionNotFound user error.
func Get(ctx context.Context, c client.Reader, ns, name string, class common.ClassReference) (*terraformv1.ClassRevision, error) {
	rev := &terraformv1.ClassRevision{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rev)
	if err == nil && (rev.Spec.ClassRef.Kind != class.Kind || rev.Spec.ClassRef.Name != class.Name) {
		return nil, resource.UserErrorf(ReasonRevisionNotFound, "ClassRevision %s/%s (spec.revision) is a revision of %s %s, not of %s %s: set spec.revision to one of the class's status.revisions",
			ns, name, rev.Spec.ClassRef.Kind, rev.Spec.ClassRef.Name, class.Kind, class.Name)
	}
	if apierrors.IsNotFound(err) {
		return nil, resource.UserErrorf(ReasonRevisionNotFound, "ClassRevision %s/%s (spec.revision) does not exist: set spec.revision to one of the class's status.revisions", ns, name)
	}
	if err != nil {
		return nil, fmt.Errorf("get class revision: %w", err)
	}
	return rev, nil
}

// Overlay is class as it was at rev: its specTemplate replaced by rev's, but for the fields
// that are not part of revisions, which stay the class's own. newClass makes an empty
// object of class's kind.
func Overlay(class Class, rev *terraformv1.ClassRevision, newClass func() resource.NonPortableClass) (resource.NonPortableClass, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(class)
	if err != nil {
		return nil, fmt.Errorf("read class: %w", err)
	}
	tmpl := map[string]any{}
	if rev.Spec.Template != nil {
		if err := json.Unmarshal(rev.Spec.Template.Raw, &tmpl); err != nil {
			return nil, fmt.Errorf("read the template of revision %s: %w", rev.Name, err)
		}
	}
	current, _ := obj["specTemplate"].(map[string]any)
	for _, k := range notInTemplate {
		if v, ok := current[k]; ok {
			tmpl[k] = v
		}
	}
	obj["specTemplate"] = tmpl
	out := newClass()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out); err != nil {
		return nil, fmt.Errorf("class %s at revision %s: %w", class.GetName(), rev.Name, err)
	}
	return out, nil
}

// SteeringChanged reports whether a class's update from before to after changes what
// steers its resources: its generation, its conditions other than RolloutPaused (times
// aside), its latest revision, or which resources the rollout lets onto which revision.
// The counts of resources per revision and the rollout's progress change with every
// resource, and steer none.
func SteeringChanged(before, after Class) bool {
	return before.GetGeneration() != after.GetGeneration() || !reflect.DeepEqual(steeringOf(before), steeringOf(after))
}

// steering is what of a class's status steers its resources.
type steering struct {
	conditions []steeringCondition
	latest     string
	rollout    string
	admitted   []string
	completed  bool
}

// steeringCondition is a condition without its times and generation.
type steeringCondition struct{ typ, status, reason, message string }

// steeringOf is class's steering.
func steeringOf(class Class) steering {
	rc := class.GetClassRevisions()
	st := steering{latest: rc.LatestRevision}
	for _, c := range *class.GetClassConditions() {
		if c.Type != common.TypeRolloutPaused {
			st.conditions = append(st.conditions, steeringCondition{c.Type, string(c.Status), c.Reason, c.Message})
		}
	}
	if ro := rc.Rollout; ro != nil {
		st.rollout, st.admitted, st.completed = ro.Revision, ro.Admitted, ro.CompletedAt != nil
	}
	return st
}
