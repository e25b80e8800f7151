package classrevision

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/cacheread"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// revisions lists the class's revisions, oldest first.
func (r *Reconciler) revisions(ctx context.Context, class revision.Class) ([]terraformv1.ClassRevision, error) {
	list := &terraformv1.ClassRevisionList{}
	if err := r.client.List(ctx, list, client.InNamespace(class.GetNamespace()), client.MatchingLabels{revision.ClassLabel: string(class.GetUID())}); err != nil {
		return nil, fmt.Errorf("list class revisions: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b terraformv1.ClassRevision) int { return int(a.Spec.Revision - b.Spec.Revision) })
	return list.Items, nil
}

// module is what the class's resources run now: the bundled module, or the class's own.
func (r *Reconciler) module(ctx context.Context, class client.Object) (*module.Module, error) {
	if r.kind.Terraform.ClassModule == nil {
		return r.bundled, nil
	}
	if !revision.Makeable(class) {
		return nil, errNotReady
	}
	return r.kind.Terraform.ClassModule(ctx, r.client, class)
}

// ensure returns the revision of what the class runs now, made (numbered after the
// class's newest) if the class has none with that content.
func (r *Reconciler) ensure(ctx context.Context, class revision.Class, revs []terraformv1.ClassRevision) (*terraformv1.ClassRevision, error) {
	mod, err := r.module(ctx, class)
	if err != nil {
		return nil, err
	}
	var next int64 = 1
	if n := len(revs); n > 0 {
		next = revs[n-1].Spec.Revision + 1
	}
	if lock := revisionLock(class, mod, revs); !bytes.Equal(lock, mod.Lock) {
		withLock := *mod // the loader's module is shared: the revision's lock goes on a copy
		withLock.Lock = lock
		mod = &withLock
	}
	providers, err := r.providerConfigs(ctx, class)
	if err != nil {
		return nil, err
	}
	want, err := revision.Build(class, r.kind.ClassGVK, mod, providers, next)
	if err != nil {
		return nil, err
	}
	for i := range revs {
		if revs[i].Name == want.Name {
			return &revs[i], nil
		}
	}
	if err := controllerutil.SetControllerReference(class, want, r.client.Scheme()); err != nil {
		return nil, fmt.Errorf("own class revision: %w", err)
	}
	if err := r.client.Create(ctx, want); err != nil {
		if apierrors.IsAlreadyExists(err) { // made by an earlier run our cache does not show yet
			return nil, fmt.Errorf("class revision %s exists already; looking again", want.Name)
		}
		return nil, fmt.Errorf("create class revision: %w", err)
	}
	return want, nil
}

// revisionLock is the provider lock a new revision of class keeps, which its resources
// take when they move to it: the module's own, if it ships one (bundled modules do);
// else, for a ModuleClass, the upgrade its resources' plans offered it, or the lock of
// its newest revision (a past upgrade's), or none (each resource keeps its own).
func revisionLock(class revision.Class, mod *module.Module, revs []terraformv1.ClassRevision) []byte {
	mc, ok := class.(*terraformv1.ModuleClass)
	switch {
	case !ok || mod.Lock != nil:
		return mod.Lock
	case mc.Status.ProviderUpgrade != "":
		return []byte(mc.Status.ProviderUpgrade)
	case len(revs) > 0 && revs[len(revs)-1].Spec.ProviderLock != "":
		return []byte(revs[len(revs)-1].Spec.ProviderLock)
	}
	return nil
}

// tookUpgrade makes the provider upgrade a ModuleClass was offered its lock, once latest
// (its newest revision) carries it: the class's resources and new Modules run it from then.
func tookUpgrade(class revision.Class, latest *terraformv1.ClassRevision) {
	mc, ok := class.(*terraformv1.ModuleClass)
	if !ok || latest == nil || mc.Status.ProviderUpgrade == "" || latest.Spec.ProviderLock != mc.Status.ProviderUpgrade {
		return
	}
	mc.Status.ProviderLock, mc.Status.ProviderUpgrade = mc.Status.ProviderUpgrade, ""
}

// providerConfigs are the specs of the ProviderConfigs the class's template names, as
// they are now: a change to one makes a new revision (credentials' Secrets aside).
func (r *Reconciler) providerConfigs(ctx context.Context, class revision.Class) ([]terraformv1.RevisionProviderConfig, error) {
	if r.kind.ProviderGVK.Empty() {
		return nil, nil
	}
	tmpl, err := revision.Template(class)
	if err != nil {
		return nil, err
	}
	return revision.SnapshotProviderConfigs(ctx, r.client, class.GetNamespace(), r.kind.ProviderGVK, revision.ProviderConfigNames(tmpl))
}

// upsert is revs with rev in it.
func upsert(revs []terraformv1.ClassRevision, rev *terraformv1.ClassRevision) []terraformv1.ClassRevision {
	if slices.ContainsFunc(revs, func(x terraformv1.ClassRevision) bool { return x.Name == rev.Name }) {
		return revs
	}
	return append(revs, *rev)
}

// member is one resource of the class, as the revisions see it.
type member struct {
	// name is the resource's; key orders a rollout's waves: its claim's namespace and
	// name, so that resources move in the order users know them by.
	name, key string
	// want is the revision it is told to run (spec.revision), runs the one it ran last.
	want, runs string
	// ready: Ready and Synced.
	ready bool
	// policy is its own revisionPolicy (empty: the class's); automatic: it follows new
	// revisions (revisionPolicy Automatic), which the fleet works out with the class.
	policy    common.RevisionPolicy
	automatic bool
	// failed says how its latest spec failed (a Synced=False reason that is not a wait,
	// and its message); empty when it did not.
	failed string
	// providers are the provider versions it ran with last, one per line
	// ("hashicorp/random 3.9.0").
	providers string
}

// fleet lists the resources made from class, reading the cache's own objects: a class
// of thousands is looked at often. It makes room for as many as the class had last time.
func (r *Reconciler) fleet(ctx context.Context, class revision.Class) ([]member, error) {
	out := make([]member, 0, r.sizes.size(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(class)}))
	err := (cacheread.Source{Informers: r.informers, Reader: r.client}).Each(ctx, r.kind.New(), r.kind.NewList(), class.GetNamespace(), func(obj client.Object) {
		mg, ok := obj.(resource.Managed)
		if !ok {
			return
		}
		ref := mg.GetManagedSpec().ClassRef
		if ref == nil || ref.Kind != r.kind.ClassGVK.Kind || ref.Name != class.GetName() {
			return
		}
		m := memberOf(mg)
		m.automatic = common.RevisionPolicyOf(m.policy, class.GetSpecTemplate().RevisionPolicy) == common.RevisionAutomatic
		out = append(out, m)
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", r.kind.GVK.Kind, err)
	}
	return out, nil
}

// memberOf is mg as its class's revisions see it (automatic is left to the fleet).
func memberOf(mg resource.Managed) member {
	st, spec := mg.GetManagedStatus(), mg.GetManagedSpec()
	key := mg.GetName()
	if ref := spec.ClaimRef; ref != nil {
		key = ref.Namespace + "/" + ref.Name
	}
	return member{name: mg.GetName(), key: key, want: spec.Revision, runs: st.Revision, policy: spec.RevisionPolicy,
		ready:  resource.IsReady(st.Conditions) && meta.IsStatusConditionTrue(st.Conditions, common.TypeSynced),
		failed: failure(mg), providers: locks.versions(st.Terraform.ProviderLock)}
}

// failure says how mg's latest spec failed: its Synced=False reason and message, unless
// the reason is a wait; empty when it did not fail.
func failure(mg resource.Managed) string {
	synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced)
	if synced == nil || synced.Status != metav1.ConditionFalse || synced.ObservedGeneration != mg.GetGeneration() ||
		slices.Contains(waitingReasons, synced.Reason) {
		return ""
	}
	msg := synced.Message
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return synced.Reason + ": " + msg
}

// prune deletes the revisions that are not the latest, that no resource names, and that
// are older than the Keep newest, and returns those left.
func (r *Reconciler) prune(ctx context.Context, revs []terraformv1.ClassRevision, latest *terraformv1.ClassRevision, fleet []member) ([]terraformv1.ClassRevision, error) {
	named := map[string]bool{}
	for _, m := range fleet {
		named[m.want], named[m.runs] = true, true
	}
	var kept []terraformv1.ClassRevision
	for i, rev := range revs {
		recent := i >= len(revs)-Keep
		if recent || named[rev.Name] || latest != nil && rev.Name == latest.Name {
			kept = append(kept, rev)
			continue
		}
		if err := r.client.Delete(ctx, &revs[i]); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("delete class revision %s: %w", rev.Name, err)
		}
	}
	return kept, nil
}

// report is the class's revisions, newest first, with the resources on each; latest names
// the revision of what it runs now (nil: unknown, the last one reported, was, stays).
func report(revs []terraformv1.ClassRevision, latest *terraformv1.ClassRevision, fleet []member, was string) common.ClassRevisions {
	out := common.ClassRevisions{LatestRevision: was}
	if latest != nil {
		out.LatestRevision = latest.Name
	}
	for i := len(revs) - 1; i >= 0; i-- {
		rev := revs[i]
		c := common.RevisionCount{Name: rev.Name, Revision: rev.Spec.Revision, CreatedAt: rev.CreationTimestamp}
		for _, m := range fleet {
			switch {
			case m.runs == rev.Name:
				c.Resources++
				if m.ready {
					c.Ready++
				}
			case m.want == rev.Name:
				c.Pending++
			}
		}
		out.Revisions = append(out.Revisions, c)
	}
	out.Providers = providerCounts(fleet)
	return out
}

// providerCounts counts fleet by the provider versions its resources run, sorted by
// provider and version.
func providerCounts(fleet []member) []common.ProviderVersionCount {
	counts := map[string]int{}
	for _, m := range fleet {
		for pv := range strings.Lines(m.providers) {
			counts[strings.TrimSuffix(pv, "\n")]++
		}
	}
	var out []common.ProviderVersionCount
	for _, pv := range slices.Sorted(maps.Keys(counts)) {
		provider, version, _ := strings.Cut(pv, " ")
		out = append(out, common.ProviderVersionCount{Provider: provider, Version: version, Resources: counts[pv]})
	}
	return out
}

// lockVersions reads the provider versions of dependency locks, each distinct lock once:
// a class of thousands of resources holds a few.
type lockVersions struct {
	mu   sync.Mutex
	read map[string]string
}

// locks reads the locks of every class's resources.
var locks = &lockVersions{read: map[string]string{}}

// versions are the provider versions lock holds, one per line ("hashicorp/random 3.9.0").
func (l *lockVersions) versions(lock string) string {
	if lock == "" {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.read[lock]; ok {
		return v
	}
	if len(l.read) >= 256 {
		clear(l.read) // locks are few: starting over is cheap
	}
	v := strings.Join(engine.LockedVersions([]byte(lock)), "\n")
	l.read[lock] = v
	return v
}
