package workload

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

const resUID = types.UID("res-uid")

// clusters is a ClusterSource that knows one target cluster, whose credentials are
// Secret team-a/east-creds; failing makes it fail as a broken cache would.
type clusters struct {
	target  *remote.Cluster
	failing bool
}

func (c clusters) Cluster(_ context.Context, key types.NamespacedName) (*remote.Cluster, error) {
	switch {
	case c.failing:
		return nil, errors.New("cache broken")
	case key == types.NamespacedName{Namespace: ns, Name: "east-creds"}:
		return c.target, nil
	}
	return nil, resource.UserErrorf("CredentialsNotFound", "connection Secret %s does not exist", key)
}

// eastPC is ProviderConfig team-a/east, the target every resource here names.
func eastPC() *kubernetesv1.ProviderConfig {
	pc := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "east"}}
	pc.Spec.CredentialsSecretRef.Name = "east-creds"
	return pc
}

var eastRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "east"}

// submitted is a resource of a ConfigMap apps/cfg for east that propagates Secret db.
func submitted(state workloadv1.ResourceState, submittedTo *workloadv1.ClusterReference) *workloadv1.KubernetesApplicationResource {
	r := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg", UID: resUID, Generation: 1,
		Finalizers: []string{resource.Finalizer}}}
	r.Spec.Template = workloadv1.Template{APIVersion: "v1", Kind: "ConfigMap", Metadata: workloadv1.TemplateMetadata{Namespace: "apps", Name: "cfg"}}
	r.Spec.Secrets = []corev1.LocalObjectReference{{Name: "db"}}
	r.Spec.TargetRef, r.Status.State, r.Status.ClusterRef = eastRef, state, submittedTo
	return r
}

// resourceFixture is a resource reconciler over a fake control cluster and a fake target.
type resourceFixture struct {
	local, target client.Client
	r             *ResourceReconciler
	events        *events.FakeRecorder
}

func newResourceFixture(source clusters, remoteObjs []client.Object, local ...client.Object) *resourceFixture {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	target := fake.NewClientBuilder().WithScheme(s).WithObjects(remoteObjs...).Build()
	if source.target == nil {
		source.target = &remote.Cluster{Client: target, Host: "https://east"}
	}
	c := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(local...).WithStatusSubresource(&workloadv1.KubernetesApplicationResource{}).Build()
	rec := events.NewFakeRecorder(10)
	return &resourceFixture{local: c, target: target, events: rec, r: &ResourceReconciler{client: c, opts: kubernetes.Options{}.WithDefaults(),
		targets: &kubernetes.Targets{Local: c, Cache: source}, recorder: resource.RecorderFor(rec)}}
}

func (f *resourceFixture) reconcile(t *testing.T) error {
	t.Helper()
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "cfg"}})
	return err
}

func (f *resourceFixture) resource() *workloadv1.KubernetesApplicationResource {
	r := &workloadv1.KubernetesApplicationResource{}
	if err := f.local.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cfg"}, r); err != nil {
		return nil
	}
	return r
}

// remoteOwners names the remote objects and their owner annotations, as "Kind ns/name=owner".
func (f *resourceFixture) remoteOwners() []string {
	var out []string
	for _, obj := range []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "cfg"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "cfg-db"}}} {
		if err := f.target.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err == nil {
			out = append(out, typeName(obj)+" "+obj.GetName()+"="+obj.GetAnnotations()[common.RemoteOwnerAnnotation])
		}
	}
	return out
}

func typeName(obj client.Object) string {
	if _, ok := obj.(*corev1.Secret); ok {
		return "Secret"
	}
	return "ConfigMap"
}

var dbSecret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("pw")}}

// TestSubmit: a resource propagates its Secrets, applies its template and reports what it
// submitted where; whatever stops it leaves a state and a reason to act on, Stalled when
// someone must act.
func TestSubmit(t *testing.T) {
	noTarget := submitted("", nil)
	noTarget.Spec.TargetRef = nil
	type result struct {
		State     workloadv1.ResourceState
		Synced    string
		Submitted bool // status.clusterRef
		Remote    []string
		Progress  string // as kstatus reads it: Stalled/<reason>, Reconciling or Applied
	}
	cases := map[string]struct {
		res    *workloadv1.KubernetesApplicationResource
		local  []client.Object
		remote []client.Object
		source clusters
		want   result
	}{
		"submitted": {
			res: submitted("", nil), local: []client.Object{eastPC(), dbSecret},
			want: result{workloadv1.ResourceStateSubmitted, "True/" + common.ReasonReconcileSuccess, true, []string{"ConfigMap cfg=res-uid", "Secret cfg-db=res-uid"}, "Applied"},
		},
		"no target yet": {
			res: noTarget, local: []client.Object{eastPC(), dbSecret},
			want: result{workloadv1.ResourceStatePending, "True/WaitingForTarget", false, nil, "Reconciling"},
		},
		"a Secret to propagate not there yet": {
			res: submitted("", nil), local: []client.Object{eastPC()},
			want: result{workloadv1.ResourceStatePending, "True/WaitingForSecret", false, nil, "Reconciling"},
		},
		"the target does not exist": {
			res: submitted("", nil), local: []client.Object{dbSecret},
			want: result{workloadv1.ResourceStateFailed, "False/ClusterNotFound", false, nil, "Stalled/ClusterNotFound"},
		},
		"an object of that name is not its own": {
			res: submitted("", nil), local: []client.Object{eastPC(), dbSecret},
			remote: []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "cfg"}}},
			want:   result{workloadv1.ResourceStateFailed, "False/" + common.ReasonRemoteObjectConflict, true, []string{"ConfigMap cfg=", "Secret cfg-db=res-uid"}, "Stalled/" + common.ReasonRemoteObjectConflict},
		},
		"a broken cluster cache keeps what it had": {
			res: submitted(workloadv1.ResourceStateSubmitted, eastRef), local: []client.Object{eastPC(), dbSecret}, source: clusters{failing: true},
			want: result{workloadv1.ResourceStateSubmitted, "False/" + common.ReasonReconcileError, true, nil, "Reconciling"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newResourceFixture(tc.source, tc.remote, append(tc.local, tc.res)...)
			_ = f.reconcile(t)
			res := f.resource()
			got := result{State: res.Status.State, Submitted: res.Status.ClusterRef != nil, Remote: f.remoteOwners()}
			if c := meta.FindStatusCondition(res.Status.Conditions, common.TypeSynced); c != nil {
				got.Synced = string(c.Status) + "/" + c.Reason
			}
			got.Progress = progress(res.Status.Conditions, res.Status.ObservedGeneration, res.Generation)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPropagatedSecret: a propagated Secret keeps its data and type, under the
// resource's name, in the template's namespace (default when it names none).
func TestPropagatedSecret(t *testing.T) {
	for name, tc := range map[string]struct{ templateNS, want string }{"the template's namespace": {"web", "web"}, "none named": {"", "default"}} {
		t.Run(name, func(t *testing.T) {
			res := submitted("", nil)
			res.Spec.Template.Metadata.Namespace = tc.templateNS
			f := newResourceFixture(clusters{}, nil, eastPC(), dbSecret, res)
			if err := f.reconcile(t); err != nil {
				t.Fatal(err)
			}
			got := &corev1.Secret{}
			if err := f.target.Get(context.Background(), client.ObjectKey{Namespace: tc.want, Name: "cfg-db"}, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{dbSecret.Data, corev1.SecretTypeOpaque}, []any{got.Data, got.Type}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestResourceDelete: the remote object and propagated Secrets go before the finalizer;
// a target that is gone is reported, and one that fails holds the deletion.
func TestResourceDelete(t *testing.T) {
	mine := map[string]string{common.RemoteOwnerAnnotation: string(resUID)}
	remoteObjs := []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "cfg", Annotations: mine}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "cfg-db", Annotations: mine}}}
	cases := map[string]struct {
		res    *workloadv1.KubernetesApplicationResource
		local  []client.Object
		source clusters
		gone   bool
		remote []string
		events []string
	}{
		"what it submitted goes": {res: submitted(workloadv1.ResourceStateSubmitted, eastRef), local: []client.Object{eastPC()}, gone: true},
		"the target is gone": {res: submitted(workloadv1.ResourceStateSubmitted, eastRef), gone: true,
			remote: []string{"ConfigMap cfg=res-uid", "Secret cfg-db=res-uid"}, events: []string{"Warning RemoteObjectLeft"}},
		"it submitted nothing": {res: submitted(workloadv1.ResourceStateFailed, nil), source: clusters{failing: true}, gone: true,
			remote: []string{"ConfigMap cfg=res-uid", "Secret cfg-db=res-uid"}, events: []string{"Normal NothingSubmitted"}},
		"the target fails": {res: submitted(workloadv1.ResourceStateSubmitted, eastRef), local: []client.Object{eastPC()}, source: clusters{failing: true},
			remote: []string{"ConfigMap cfg=res-uid", "Secret cfg-db=res-uid"}, events: []string{"Warning " + common.ReasonReconcileError}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.res.DeletionTimestamp = ptr.To(metav1.Now())
			f := newResourceFixture(tc.source, remoteObjs, append(tc.local, tc.res)...)
			_ = f.reconcile(t)
			if diff := cmp.Diff([]any{tc.gone, tc.remote, tc.events}, []any{f.resource() == nil, f.remoteOwners(), eventsOf(f.events)}); diff != "" {
				t.Errorf("gone, remote objects, events (-want +got):\n%s", diff)
			}
		})
	}
}

func eventsOf(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, strings.Join(strings.Fields(e)[:2], " "))
		default:
			return out
		}
	}
}

func TestForSecret(t *testing.T) {
	other := submitted("", nil)
	other.Name, other.Spec.Secrets = "other", []corev1.LocalObjectReference{{Name: "api"}}
	elsewhere := submitted("", nil)
	elsewhere.Namespace = "team-b"
	f := newResourceFixture(clusters{}, nil, submitted("", nil), other, elsewhere)
	got := f.r.forSecret(context.Background(), dbSecret)
	if diff := cmp.Diff([]reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: "cfg"}}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
