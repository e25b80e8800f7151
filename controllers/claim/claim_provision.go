package claim

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// provision makes a managed resource from the claim's class and records it in resourceRef.
func (r *Reconciler) provision(ctx context.Context, claim resource.Claim) error {
	if err := r.stillQueued(claim); err != nil {
		return err
	}
	portable := r.kind.NewClass()
	key := types.NamespacedName{Namespace: claim.GetNamespace(), Name: claim.GetClaimSpec().ClassRef.Name}
	if err := r.client.Get(ctx, key, portable); err != nil {
		if apierrors.IsNotFound(err) {
			return resource.UserErrorf(ReasonClassNotFound, "%s %s does not exist in namespace %s", r.kind.ClassGVK.Kind, key.Name, key.Namespace)
		}
		return fmt.Errorf("get portable class: %w", err)
	}
	mk, class, err := r.nonPortableClass(ctx, portable)
	if err != nil {
		return err
	}
	class, rev, err := r.atRevision(ctx, class, nil, mk)
	if err != nil {
		return err
	}
	req, err := r.request(ctx, claim, portable, class)
	if err != nil {
		return err
	}
	mg, err := r.configure(req, mk)
	if err != nil {
		return err
	}
	mg.GetManagedSpec().Revision = rev
	if err := r.admit(ctx, claim); err != nil {
		return err
	}
	if err := r.client.Create(ctx, mg); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s: %w", mk.GVK.Kind, err)
	}
	claim.GetClaimSpec().ResourceRef = &common.ObjectReference{
		APIVersion: mk.GVK.GroupVersion().String(), Kind: mk.GVK.Kind, Name: mg.GetName(), Namespace: mg.GetNamespace(),
	}
	controllerutil.AddFinalizer(claim, resource.Finalizer)
	if err := r.client.Update(ctx, claim); err != nil {
		return fmt.Errorf("record resourceRef: %w", err)
	}
	return nil
}

// nonPortableClass follows a portable class's classRef.
func (r *Reconciler) nonPortableClass(ctx context.Context, portable resource.PortableClass) (*registry.ManagedKind, resource.NonPortableClass, error) {
	ref := portable.GetClassRef()
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	mk, ok := r.reg.ManagedForClass(gvk)
	if ok {
		ok = r.kind.Configurators[mk.GVK] != nil
	}
	if !ok {
		return nil, nil, resource.UserErrorf("UnsupportedClass", "%s %s/%s points at %s %s, which cannot satisfy a %s",
			r.kind.ClassGVK.Kind, portable.GetNamespace(), portable.GetName(), ref.Kind, ref.APIVersion, r.kind.GVK.Kind)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = portable.GetNamespace()
	}
	class := mk.NewClass()
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, class); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, resource.UserErrorf(ReasonClassNotFound, "%s %s/%s (named by %s %s) does not exist", ref.Kind, ns, ref.Name, r.kind.ClassGVK.Kind, portable.GetName())
		}
		return nil, nil, fmt.Errorf("get class: %w", err)
	}
	if err := r.checkClass(ctx, portable, class); err != nil {
		return nil, nil, err
	}
	return mk, class, nil
}

// configure builds the managed resource for claim from class: generic fields here, the
// kind-specific mapping in the registered configurator.
func (r *Reconciler) configure(req registry.Request, mk *registry.ManagedKind) (resource.Managed, error) {
	claim, class := req.Claim, req.Class
	tmpl := class.GetSpecTemplate()
	mg := mk.New()
	mg.SetName(strings.ToLower(r.kind.GVK.Kind) + "-" + string(claim.GetUID()))
	mg.SetNamespace(class.GetNamespace())
	mg.SetFinalizers([]string{resource.Finalizer}) // saves the managed reconciler a write
	secretNS := tmpl.WriteConnectionSecretsToNamespace
	if secretNS == "" {
		secretNS = class.GetNamespace()
	}
	policy := tmpl.ReclaimPolicy
	if policy == "" {
		policy = common.ReclaimDelete
	}
	var secret *common.SecretReference
	if claim.GetClaimSpec().WriteConnectionSecretToRef != nil {
		secret = &common.SecretReference{Name: mg.GetName(), Namespace: secretNS}
	}
	*mg.GetManagedSpec() = common.ManagedSpec{
		ProviderRef:                tmpl.ProviderRef.DeepCopy(),
		ReclaimPolicy:              policy,
		WriteConnectionSecretToRef: secret,
		ClaimRef:                   r.claimRef(claim),
		ClassRef: &common.ClassReference{APIVersion: mk.ClassGVK.GroupVersion().String(), Kind: mk.ClassGVK.Kind,
			Name: class.GetName(), Namespace: class.GetNamespace()},
		ChangePolicy: *tmpl.ChangePolicy.DeepCopy(),
		Timing:       *tmpl.Timing.DeepCopy(),
		RunnerPool:   tmpl.RunnerPool,
	}
	if err := r.kind.Configurators[mk.GVK](req, mg); err != nil {
		return nil, err
	}
	return mg, nil
}

func (r *Reconciler) claimRef(claim resource.Claim) *common.ObjectReference {
	return &common.ObjectReference{APIVersion: r.kind.GVK.GroupVersion().String(), Kind: r.kind.GVK.Kind,
		Name: claim.GetName(), Namespace: claim.GetNamespace(), UID: claim.GetUID()}
}

// request gathers what the configurator needs to provision: for a class that binds on
// first consumer, the labels of the cluster that consumer was scheduled to (waiting until
// there is one).
func (r *Reconciler) request(ctx context.Context, claim resource.Claim, portable resource.PortableClass, class resource.NonPortableClass) (registry.Request, error) {
	req := registry.Request{Claim: claim, Class: class}
	if portable.GetBindingMode() != common.BindingWaitForFirstConsumer {
		return req, nil
	}
	secret := claim.GetClaimSpec().WriteConnectionSecretToRef
	if secret == nil {
		return req, resource.UserErrorf("NoConsumerPossible", "%s %s binds on first consumer, and applications consume a claim through its connection Secret: set spec.writeConnectionSecretToRef.name",
			r.kind.ClassGVK.Kind, portable.GetName())
	}
	labels, placed, err := r.placement(ctx, claim, secret.Name)
	if err != nil {
		return req, err
	}
	if !placed {
		return req, resource.Waitf(ReasonWaitingForFirstConsumer, "%s %s binds on first consumer: waiting for a KubernetesApplication that uses Secret %s to be scheduled",
			r.kind.ClassGVK.Kind, portable.GetName(), secret.Name)
	}
	req.ClusterLabels = labels
	return req, nil
}
