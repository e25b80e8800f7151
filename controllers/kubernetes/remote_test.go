package kubernetes

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
)

// TestObjectDelete: the remote object goes when the Object owns it and does not retain
// it; the connection Secret goes in any case, even when the target cluster is gone.
func TestObjectDelete(t *testing.T) {
	failingGet := interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
		return errors.New("etcd is down")
	}}
	cases := map[string]struct {
		remote        []client.Object
		failing       bool // the target cluster answers every read with an error
		localFails    bool // so does the control cluster
		retain        bool
		noPC          bool
		err           bool
		remoteLeft    bool
		connectionSet bool // the connection Secret is still there
		events        []string
	}{
		"its remote object and its Secret":     {remote: []client.Object{remoteConfigMap(string(objUID))}},
		"retained: only its Secret":            {remote: []client.Object{remoteConfigMap(string(objUID))}, retain: true, remoteLeft: true},
		"another's remote object stays":        {remote: []client.Object{remoteConfigMap("other")}, remoteLeft: true},
		"an unmarked remote object stays":      {remote: []client.Object{remoteConfigMap("")}, remoteLeft: true},
		"nothing there":                        {},
		"the cluster is gone: only its Secret": {noPC: true, events: []string{"Warning RemoteObjectLeft"}},
		"the cluster fails: nothing yet": {remote: []client.Object{remoteConfigMap(string(objUID))}, failing: true,
			err: true, remoteLeft: true, connectionSet: true},
		"the control cluster fails: nothing yet": {remote: []client.Object{remoteConfigMap(string(objUID))}, localFails: true,
			err: true, remoteLeft: true, connectionSet: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			local := []client.Object{connectionSecret("obj-conn", objUID)}
			if !tc.noPC {
				local = append(local, providerConfig())
			}
			target := targetCluster(tc.remote...)
			stored := target.Client
			if tc.failing {
				target = &remote.Cluster{Client: interceptor.NewClient(stored.(client.WithWatch), failingGet), Host: host}
			}
			f := newFixture(target, local...)
			if tc.localFails {
				f.r.targets.Local = interceptor.NewClient(f.local.(client.WithWatch), failingGet)
			}
			o := newObject(configMapManifest)
			if tc.retain {
				o.Spec.ReclaimPolicy = common.ReclaimRetain
			}
			err := f.r.Delete(context.Background(), o)
			f.target = &remote.Cluster{Client: stored, Host: host} // read past the failures
			secretErr := f.local.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "obj-conn"}, &corev1.Secret{})
			type result struct{ Err, RemoteLeft, ConnectionSet bool }
			got := result{err != nil, f.remoteObject(configMapGVK, "apps", "cfg") != nil, secretErr == nil}
			if diff := cmp.Diff(result{tc.err, tc.remoteLeft, tc.connectionSet}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.events, f.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemoteError(t *testing.T) {
	cluster := &remote.Cluster{Host: host}
	cm := &unstructured.Unstructured{}
	cm.SetGroupVersionKind(configMapGVK)
	cm.SetNamespace("apps")
	cm.SetName("cfg")
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	ns.SetName("apps")
	gr := schema.GroupResource{Resource: "configmaps"}
	cases := map[string]struct {
		obj         *unstructured.Unstructured
		err         error
		reason      string
		unreachable bool
	}{
		"none":                      {obj: cm, err: nil},
		"a kind it does not serve":  {obj: cm, err: &meta.NoKindMatchError{GroupKind: configMapGVK.GroupKind()}, reason: "UnknownKind"},
		"no namespace yet":          {obj: cm, err: apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "apps"), reason: "WaitingForNamespace"},
		"not found, cluster-scoped": {obj: ns, err: apierrors.NewNotFound(gr, "apps"), reason: "error"},
		"refused as invalid":        {obj: cm, err: apierrors.NewInvalid(configMapGVK.GroupKind(), "cfg", nil), reason: "RemoteRejected"},
		"refused as bad":            {obj: cm, err: apierrors.NewBadRequest("no"), reason: "RemoteRejected"},
		"forbidden":                 {obj: cm, err: apierrors.NewForbidden(gr, "cfg", errors.New("rbac")), reason: "RemoteRejected"},
		"unreachable":               {obj: cm, err: &url.Error{Op: "Get", URL: host, Err: errors.New("connection refused")}, reason: "error", unreachable: true},
		"anything else":             {obj: cm, err: errors.New("boom"), reason: "error"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := remoteError(cluster, tc.obj, tc.err)
			_, unreachable := remote.AsUnreachable(err)
			if diff := cmp.Diff([]any{tc.reason, tc.unreachable}, []any{reason(err), unreachable}); diff != "" {
				t.Errorf("%v (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	for want, obj := range map[string]client.Object{"apps/cfg": remoteConfigMap(""), "apps": &corev1.Namespace{}} {
		if want == "apps" {
			obj.SetName("apps")
		}
		if got := Describe(obj); got != want {
			t.Errorf("Describe = %q, want %q", got, want)
		}
	}
}

// TestDeleteRemote: only an object the owner marked is deleted, and only once.
func TestDeleteRemote(t *testing.T) {
	deleting := remoteConfigMap(string(objUID))
	deleting.Finalizers = []string{"example.org/hold"}
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	cases := map[string]struct {
		remote  []client.Object
		deletes int
	}{
		"its own":                {remote: []client.Object{remoteConfigMap(string(objUID))}, deletes: 1},
		"its own, going already": {remote: []client.Object{deleting}},
		"another's":              {remote: []client.Object{remoteConfigMap("other")}},
		"unmarked":               {remote: []client.Object{remoteConfigMap("")}},
		"none":                   {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			deletes := 0
			stored := targetCluster(tc.remote...).Client.(client.WithWatch)
			counting := interceptor.NewClient(stored, interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				deletes++
				return c.Delete(ctx, obj, opts...)
			}})
			obj, _ := newObject(configMapManifest).Spec.ForProvider.Manifest.Object()
			if err := DeleteRemote(context.Background(), &remote.Cluster{Client: counting, Host: host}, objUID, obj); err != nil {
				t.Fatal(err)
			}
			if deletes != tc.deletes {
				t.Errorf("%d deletes, want %d", deletes, tc.deletes)
			}
		})
	}
}
