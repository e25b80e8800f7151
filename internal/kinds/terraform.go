package kinds

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// ModuleGVK is the kind of the generic Module managed resource.
var ModuleGVK = terraformv1.GroupVersion.WithKind("Module")

func moduleKind(loader *modsource.Loader) registry.ManagedKind {
	return registry.ManagedKind{
		GVK:         ModuleGVK,
		ClassGVK:    terraformv1.GroupVersion.WithKind("ModuleClass"),
		ProviderGVK: terraformv1.GroupVersion.WithKind("ProviderConfig"),
		Terraform: &registry.TerraformKind{
			ResolveProvider:    resolveProviderConfigs,
			ResolveVariables:   resolveModuleVariables,
			WatchedObjects:     moduleWatchedObjects,
			InputsAreVariables: true,
			LoadModule: func(ctx context.Context, c client.Client, mg resource.Managed) (*module.Module, error) {
				return loader.Load(ctx, c, mg.GetNamespace(), mg.(*terraformv1.Module).Spec.Source)
			},
			ClassModule: func(ctx context.Context, c client.Client, class client.Object) (*module.Module, error) {
				return loader.Load(ctx, c, class.GetNamespace(), class.(*terraformv1.ModuleClass).SpecTemplate.Source)
			},
			ConnectionKeysFor:         moduleConnectionKeys,
			ProviderConnectionKeysFor: moduleProviderConnectionKeys,
			RecordLock:                recordClassLock,
			ClassLock:                 classLock,
			OfferUpgrade: func(ctx context.Context, c client.Client, mg resource.Managed, lock []byte) error {
				return offerClassUpgrade(ctx, c, loader, mg, lock)
			},
		},
	}
}

// moduleClassOf is the ModuleClass mg was made from; nil for a Module made without one,
// or whose class is gone.
func moduleClassOf(ctx context.Context, c client.Client, mg resource.Managed) (*terraformv1.ModuleClass, error) {
	ref := mg.GetManagedSpec().ClassRef
	if ref == nil || ref.Kind != "ModuleClass" || ref.APIVersion != terraformv1.GroupVersion.String() {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = mg.GetNamespace()
	}
	class := &terraformv1.ModuleClass{}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, class)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get module class: %w", err)
	}
	return class, nil
}

// classLock is the dependency lock mg's ModuleClass recorded, if it did: the lock every
// Module of the class starts from when its module ships none.
func classLock(ctx context.Context, c client.Client, mg resource.Managed) ([]byte, error) {
	class, err := moduleClassOf(ctx, c, mg)
	if err != nil || class == nil || class.Status.ProviderLock == "" {
		return nil, err
	}
	return []byte(class.Status.ProviderLock), nil
}

// recordClassLock keeps lock, the one a Module ran with, in its ModuleClass's status when
// the class has none yet: the first init of the class's module fixes the versions every
// later Module of the class starts from.
func recordClassLock(ctx context.Context, c client.Client, mg resource.Managed, lock []byte) error {
	class, err := moduleClassOf(ctx, c, mg)
	if err != nil || class == nil || class.Status.ProviderLock != "" {
		return err
	}
	return patchClassStatus(ctx, c, class, "record the provider lock of", func(st *terraformv1.ModuleClassStatus) { st.ProviderLock = string(lock) })
}

// patchClassStatus changes class's status with set, unless another writer changed the
// class since it was read (the run that comes next looks again); a set that changes
// nothing (an empty lock, of a module without providers) writes nothing. what says what
// the patch does, for its error.
func patchClassStatus(ctx context.Context, c client.Client, class *terraformv1.ModuleClass, what string, set func(*terraformv1.ModuleClassStatus)) error {
	orig := class.DeepCopy()
	set(&class.Status)
	if err := resource.PatchStatus(ctx, c, class, orig, true); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("%s ModuleClass %s/%s: %w", what, class.Namespace, class.Name, err)
	}
	return nil
}

// offerClassUpgrade offers mg's ModuleClass lock, which holds newer provider versions
// than mg runs, as its providerUpgrade, unless the class keeps those versions already or
// its module ships a lock of its own (which a new lock in the module's source upgrades).
func offerClassUpgrade(ctx context.Context, c client.Client, loader *modsource.Loader, mg resource.Managed, lock []byte) error {
	class, err := moduleClassOf(ctx, c, mg)
	if err != nil || class == nil {
		return err
	}
	st := class.Status
	for _, kept := range []string{st.ProviderUpgrade, st.ProviderLock} {
		if kept != "" && slices.Equal(engine.LockedVersions([]byte(kept)), engine.LockedVersions(lock)) {
			return nil
		}
	}
	mod, err := loader.Load(ctx, c, class.Namespace, class.SpecTemplate.Source)
	if err != nil || mod.Lock != nil {
		return err
	}
	return patchClassStatus(ctx, c, class, "offer newer provider versions to", func(st *terraformv1.ModuleClassStatus) { st.ProviderUpgrade = string(lock) })
}

// configureModule makes a Module for any claim: the class's module, providers, connection
// mapping and fixed inputs, plus the claim fields its input mappings name.
func configureModule(req registry.Request, mg resource.Managed) error {
	return configureModuleWith(req, mg, nil)
}

// configureModuleWith is configureModule with claim values (a defined kind's
// parameters). The class's fixed inputs (forProvider) win over them, as do its input
// mappings: a value the class fixes is the class's to decide, and a defined kind's
// schema leaves such variables out of its parameters.
func configureModuleWith(req registry.Request, mg resource.Managed, claimValues map[string]any) error {
	cls := req.Class
	class, ok1 := cls.(*terraformv1.ModuleClass)
	m, ok2 := mg.(*terraformv1.Module)
	if !ok1 || !ok2 {
		return fmt.Errorf("configure Module: unexpected types %T, %T", cls, mg)
	}
	if ready := meta.FindStatusCondition(class.Status.Conditions, common.TypeReady); ready == nil || ready.Status != metav1.ConditionTrue {
		msg := "not checked yet"
		if ready != nil {
			msg = ready.Message
		}
		return resource.UserErrorf(common.ReasonClassNotReady, "ModuleClass %s/%s is not Ready: %s", class.Namespace, class.Name, msg)
	}
	m.Spec.ModuleParameters = *class.SpecTemplate.ModuleParameters.DeepCopy()
	fixed, err := common.JSONValues(class.SpecTemplate.ForProvider)
	if err != nil {
		return resource.UserErrorf("InvalidClass", "ModuleClass %s forProvider: %v", class.Name, err)
	}
	values := maps.Clone(claimValues)
	if values == nil {
		values = map[string]any{}
	}
	maps.Copy(values, fixed)
	for _, in := range class.SpecTemplate.Inputs {
		v, found, err := req.Value(in.FromFieldPath, in.FromClusterLabel)
		if err != nil {
			return fmt.Errorf("read claim: %w", err)
		}
		if found {
			values[in.ToVariable] = v
		}
	}
	return m.SetForProvider(values)
}

// resolveProviderConfigs turns a Module's providerRef and providerConfigRefs into provider
// blocks, with credentials only in the environment.
func resolveProviderConfigs(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
	m := mg.(*terraformv1.Module)
	refs := append([]common.LocalReference(nil), m.Spec.ProviderConfigRefs...)
	if r := m.Spec.ProviderRef; r != nil {
		refs = append([]common.LocalReference{*r}, refs...)
	}
	out := &registry.ProviderConfig{Env: map[string]string{}}
	used := map[string]providerValues{}
	for _, ref := range refs {
		pc := &terraformv1.ProviderConfig{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}, pc); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, resource.UserErrorf("ProviderNotFound", "%s %s/%s does not exist; create it or fix the reference", terraformv1.ProviderConfigResource, m.Namespace, ref.Name)
			}
			return nil, fmt.Errorf("get provider config: %w", err)
		}
		cfg, err := common.JSONValues(pc.Spec.Config)
		if err != nil {
			return nil, resource.UserErrorf("InvalidProviderConfig", "%s %s config: %v", terraformv1.ProviderConfigResource, pc.Name, err)
		}
		source := pc.Spec.Source
		out.Providers = append(out.Providers, render.Provider{
			Name: source[strings.LastIndex(source, "/")+1:], Source: source, Version: pc.Spec.Version, Alias: pc.Spec.Alias, Config: cfg,
		})
		env := map[string]string{}
		for _, cred := range pc.Spec.Credentials {
			data, err := readSecret(ctx, c, m.Namespace, cred.SecretKeyRef.Name, cred.SecretKeyRef.Key)
			if err != nil {
				return nil, err
			}
			env[cred.Env] = string(data[cred.SecretKeyRef.Key])
		}
		maps.Copy(out.Env, env)
		identity, err := providerConfigIdentity(m.Namespace+"/"+pc.Name, pc.Spec.InjectedIdentity)
		if err != nil {
			return nil, err
		}
		maps.Copy(out.Env, identity)
		used[pc.Name] = providerValues{config: cfg, credentials: handedOut(pc, env)}
	}
	var err error
	out.Connection, err = moduleConnection(m, used)
	return out, err
}
