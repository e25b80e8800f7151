package claimdefinition

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/claimcrd"
	"terraplane.io/terraplane/internal/claimschema"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// run is one reconcile's working state, filled in by the phases.
type run struct {
	def, orig    *apiextv1.ClaimDefinition
	params       apiextensionsv1.JSONSchemaProps
	untranslated []apiextv1.UntranslatedValidation
	claim, class *apiextensionsv1.CustomResourceDefinition
	// conflicts are names of the kinds that another group serves too.
	conflicts []string
	// checked: the CRDs were looked at; established: both are served, and the kind may be.
	checked, established bool
	err                  error
}

// gvk is the claim kind; classGVK its portable class kind.
func (c *run) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: c.def.Spec.Group, Version: claimcrd.Version, Kind: c.def.Spec.Names.Kind}
}

func (c *run) classGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: c.def.Spec.Group, Version: claimcrd.Version, Kind: c.def.ClassKindName()}
}

// schema builds the parameters schema (from the module, or as written) and both CRDs.
func (r *Reconciler) schema(ctx context.Context, c *run) error {
	switch spec := c.def.Spec; {
	case spec.FromModule != nil:
		if err := r.fromModule(ctx, c, spec.FromModule); err != nil {
			return err
		}
	case spec.Schema != nil:
		if err := json.Unmarshal(spec.Schema.Raw, &c.params); err != nil {
			return resource.UserErrorf(apiextv1.ReasonInvalidSchema, "spec.schema is not an OpenAPI v3 schema: %v", err)
		}
		if c.params.Type != "object" {
			return resource.UserErrorf(apiextv1.ReasonInvalidSchema, "spec.schema must be of type object (it is the schema of spec.parameters)")
		}
	default:
		return resource.UserErrorf(apiextv1.ReasonInvalidSchema, "set spec.fromModule or spec.schema")
	}
	c.claim, c.class = claimcrd.ClaimCRD(c.def, c.params), claimcrd.ClassCRD(c.def)
	return nil
}

// fromModule generates the parameters schema from the ModuleClass's module.
func (r *Reconciler) fromModule(ctx context.Context, c *run, from *apiextv1.FromModule) error {
	key := types.NamespacedName{Namespace: r.namespaceOf(from), Name: from.ModuleClassRef.Name}
	class := &terraformv1.ModuleClass{}
	if err := r.client.Get(ctx, key, class); err != nil {
		if apierrors.IsNotFound(err) {
			return resource.UserErrorf(apiextv1.ReasonModuleClassNotFound, "ModuleClass %s/%s (spec.fromModule.moduleClassRef) does not exist", key.Namespace, key.Name)
		}
		return fmt.Errorf("get module class: %w", err)
	}
	ld, err := r.loader.LoadSource(ctx, r.client, key.Namespace, class.SpecTemplate.Source)
	if err != nil {
		return err
	}
	vars, err := claimschema.ParseVariables(ld.Module.Files)
	if err != nil {
		return resource.UserErrorf(apiextv1.ReasonInvalidSchema, "module of ModuleClass %s/%s: %v", key.Namespace, key.Name, err)
	}
	opts, err := schemaOptions(class, from)
	if err != nil {
		return resource.UserErrorf(apiextv1.ReasonInvalidSchema, "%v", err)
	}
	res, err := claimschema.Generate(vars, opts)
	if err != nil {
		return resource.UserErrorf(apiextv1.ReasonInvalidSchema, "module of ModuleClass %s/%s: %v", key.Namespace, key.Name, err)
	}
	c.params = res.Parameters
	c.untranslated = nil
	for _, u := range res.Untranslated {
		c.untranslated = append(c.untranslated, apiextv1.UntranslatedValidation{Variable: u.Variable, Condition: u.Condition, Reason: u.Reason})
	}
	return nil
}

// schemaOptions are how the definition makes its schema from class's module: the
// variables it exposes or hides, the parameter schemas it gives, and the variables the
// class fixes in its forProvider, which claims cannot set (the class's values win).
func schemaOptions(class *terraformv1.ModuleClass, from *apiextv1.FromModule) (claimschema.Options, error) {
	opts := claimschema.Options{Expose: from.Expose, Hide: from.Hide, InferAnyFromDefaults: from.InferAnyFromDefaults}
	fixed, err := common.JSONValues(class.SpecTemplate.ForProvider)
	if err != nil {
		return opts, fmt.Errorf("ModuleClass %s/%s forProvider: %w", class.Namespace, class.Name, err)
	}
	for name := range fixed {
		opts.Fixed = append(opts.Fixed, name)
	}
	sort.Strings(opts.Fixed)
	for name, raw := range from.ParameterSchemas {
		var p apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal(raw.Raw, &p); err != nil {
			return opts, fmt.Errorf("spec.fromModule.parameterSchemas.%s is not an OpenAPI v3 schema: %w", name, err)
		}
		if opts.ParameterSchemas == nil {
			opts.ParameterSchemas = map[string]apiextensionsv1.JSONSchemaProps{}
		}
		opts.ParameterSchemas[name] = p
	}
	return opts, nil
}

// checkNames notes the names of the definition's kinds that another group serves too
// (kubectl would answer from one group only): the kinds are served all the same, so that
// a definition that worked goes on working, and Ready says so, with one event.
func (r *Reconciler) checkNames(ctx context.Context, c *run) error {
	if r.opts.Discovery == nil {
		return nil
	}
	_, served, err := r.opts.Discovery.ServerGroupsAndResources()
	if err != nil && len(served) == 0 {
		ctrl.LoggerFrom(ctx).Info("names not checked: discovery failed", "error", err.Error())
		return nil
	}
	n := c.def.Spec.Names
	c.conflicts = claimschema.NameConflicts(served, c.def.Spec.Group, n.Kind, n.Plural, n.ShortNames)
	class := c.classGVK().Kind
	c.conflicts = append(c.conflicts, claimschema.NameConflicts(served, c.def.Spec.Group, class, c.class.Spec.Names.Plural, nil)...)
	return nil
}

// checkBreaking refuses a schema that removes or retypes a field existing claims set,
// or newly requires one they lack; the CRD then keeps serving the old schema.
func (r *Reconciler) checkBreaking(ctx context.Context, c *run) error {
	have := &apiextensionsv1.CustomResourceDefinition{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: c.claim.Name}, have); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1IsControlledBy(have, c.def) {
		return resource.UserErrorf(apiextv1.ReasonConflict, "CustomResourceDefinition %s exists and does not belong to this ClaimDefinition", have.Name)
	}
	old, ok := claimcrd.Parameters(have)
	if !ok {
		return nil
	}
	changes := claimschema.BreakingChanges(old, c.params)
	if len(changes) == 0 {
		return nil
	}
	claims, err := r.claims(ctx, c)
	if err != nil {
		return err
	}
	var broken []string
	for _, cl := range claims {
		params, _, _ := unstructured.NestedFieldNoCopy(cl.Object, "spec", "parameters")
		var hit []string
		for _, ch := range changes {
			if ch.Affects(params) {
				hit = append(hit, ch.String())
			}
		}
		if len(hit) > 0 {
			broken = append(broken, fmt.Sprintf("%s/%s (%s)", cl.GetNamespace(), cl.GetName(), strings.Join(hit, ", ")))
		}
	}
	if len(broken) == 0 {
		return nil
	}
	return resource.UserErrorf(apiextv1.ReasonBreakingChange, "the new schema would break %d %s claim(s): %s; the kind keeps serving its previous schema. Update or delete those claims, or keep the fields",
		len(broken), c.def.Spec.Names.Kind, strings.Join(broken, "; "))
}

// apply creates or updates both CRDs, owned by the definition.
func (r *Reconciler) apply(ctx context.Context, c *run) error {
	for _, want := range []*apiextensionsv1.CustomResourceDefinition{c.claim, c.class} {
		have := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: want.ObjectMeta}
		have.Labels = nil
		_, err := controllerutil.CreateOrUpdate(ctx, r.client, have, func() error {
			if have.UID != "" && !metav1IsControlledBy(have, c.def) {
				return resource.UserErrorf(apiextv1.ReasonConflict, "CustomResourceDefinition %s exists and does not belong to this ClaimDefinition", have.Name)
			}
			if have.Labels == nil {
				have.Labels = map[string]string{}
			}
			have.Labels[claimcrd.DefinitionLabel] = c.def.Name
			have.Spec = want.Spec
			return controllerutil.SetControllerReference(c.def, have, r.client.Scheme())
		})
		if err != nil {
			if _, user := resource.AsUserError(err); user {
				return err
			}
			if apierrors.IsInvalid(err) {
				return resource.UserErrorf(apiextv1.ReasonInvalidSchema, "the API server refuses CustomResourceDefinition %s: %v", want.Name, err)
			}
			return fmt.Errorf("apply %s: %w", want.Name, err)
		}
	}
	return nil
}

// established waits until the API server serves both kinds.
func (r *Reconciler) established(ctx context.Context, c *run) error {
	c.checked = true
	for _, name := range []string{c.claim.Name, c.class.Name} {
		have := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, have); err != nil {
			if apierrors.IsNotFound(err) {
				return resource.Waitf(apiextv1.ReasonWaitingForCRD, "waiting for CustomResourceDefinition %s", name)
			}
			return fmt.Errorf("get %s: %w", name, err)
		}
		if !crdCondition(have, apiextensionsv1.Established) {
			return resource.Waitf(apiextv1.ReasonWaitingForCRD, "waiting for CustomResourceDefinition %s to be Established", name)
		}
	}
	c.established = true
	return nil
}

// register adds the kind to the registry and, with a KindServer, starts its claim
// reconciler; a kind compiled in is a conflict either way.
func (r *Reconciler) register(_ context.Context, c *run) error {
	kind, ok := r.reg.Claim(c.gvk())
	if !ok {
		r.reg.AddClaim(kinds.DefinedClaim(c.gvk(), c.classGVK()))
		kind, _ = r.reg.Claim(c.gvk())
	}
	if !kind.Defined || kind.ClassGVK != c.classGVK() {
		return resource.UserErrorf(apiextv1.ReasonConflict, "claim kind %s is already served (with class %s)", c.gvk(), kind.ClassGVK.Kind)
	}
	if r.server == nil {
		return nil
	}
	if err := r.server.Serve(kind); err != nil {
		return fmt.Errorf("serve %s: %w", c.gvk().Kind, err)
	}
	return nil
}

// delete lets a definition go once no claim of its kind is left, deleting its CRDs.
func (r *Reconciler) delete(ctx context.Context, c *run) error {
	if !controllerutil.ContainsFinalizer(c.def, resource.Finalizer) {
		return nil
	}
	claims, err := r.claims(ctx, c)
	if err != nil {
		return err
	}
	if len(claims) > 0 {
		names := make([]string, 0, len(claims))
		for _, cl := range claims {
			names = append(names, cl.GetNamespace()+"/"+cl.GetName())
		}
		sort.Strings(names)
		return resource.UserErrorf(apiextv1.ReasonClaimsExist, "deletion waits: %d %s claim(s) still exist (%s); delete them first, and the definition and its kinds go",
			len(names), c.def.Spec.Names.Kind, strings.Join(names, ", "))
	}
	for _, name := range []string{claimcrd.ClaimCRD(c.def, apiextensionsv1.JSONSchemaProps{}).Name, claimcrd.ClassCRD(c.def).Name} {
		have := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, have); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("get %s: %w", name, err)
		}
		if metav1IsControlledBy(have, c.def) {
			if err := r.client.Delete(ctx, have); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete %s: %w", name, err)
			}
		}
	}
	return resource.RemoveFinalizer(ctx, r.client, c.def)
}

// claims lists every claim of the definition's kind, read from the API server; none while
// the kind is not served.
func (r *Reconciler) claims(ctx context.Context, c *run) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(c.gvk().GroupVersion().WithKind(c.gvk().Kind + "List"))
	if err := r.client.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s claims: %w", c.gvk().Kind, err)
	}
	return list.Items, nil
}

func crdCondition(c *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == t {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func metav1IsControlledBy(obj client.Object, owner client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}
