package kubernetes

import (
	"context"
	"testing"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
)

const configMapManifest = `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "apps", "name": "cfg"}, "data": {"k": "new"}}`

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// remoteConfigMap is ConfigMap apps/cfg in the target cluster, owned by owner ("" for none).
func remoteConfigMap(owner string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "cfg"}, Data: map[string]string{"k": "old"}}
	if owner != "" {
		cm.Annotations = map[string]string{common.RemoteOwnerAnnotation: owner}
	}
	return cm
}

// TestObjectApply: the manifest is applied, marked as the Object's, unless the remote
// object is another's and the adoption policy does not take it over.
func TestObjectApply(t *testing.T) {
	liveObject := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "other", UID: "live"}}
	liveResource := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: "team-c", Name: "res", UID: "live"}}
	cases := map[string]struct {
		manifest string
		policy   kubernetesv1.AdoptionPolicy
		remote   []client.Object
		local    []client.Object // besides the ProviderConfig
		reason   string
		data     string // of the remote ConfigMap afterwards
		owner    string // its owner annotation
		events   []string
	}{
		"creates it":         {manifest: configMapManifest, data: "new", owner: string(objUID)},
		"updates its own":    {manifest: configMapManifest, remote: []client.Object{remoteConfigMap(string(objUID))}, data: "new", owner: string(objUID)},
		"not its namespace":  {manifest: `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}}`, reason: "NamespaceRequired"},
		"no manifest at all": {manifest: `{"apiVersion": "v1", "metadata": {"name": "cfg"}}`, reason: "InvalidManifest"},
		"made by someone else, left alone by default": {
			manifest: configMapManifest, remote: []client.Object{remoteConfigMap("")}, reason: common.ReasonRemoteObjectConflict, data: "old",
		},
		"made by someone else, taken over with Always": {
			manifest: configMapManifest, policy: kubernetesv1.AdoptAlways, remote: []client.Object{remoteConfigMap("")},
			data: "new", owner: string(objUID), events: []string{"Normal " + common.ReasonAdopted},
		},
		"left behind, left alone by default": {
			manifest: configMapManifest, remote: []client.Object{remoteConfigMap("gone")}, reason: common.ReasonRemoteObjectConflict, data: "old", owner: "gone",
		},
		"left behind, taken over with Orphaned": {
			manifest: configMapManifest, policy: kubernetesv1.AdoptOrphaned, remote: []client.Object{remoteConfigMap("gone")},
			data: "new", owner: string(objUID), events: []string{"Normal " + common.ReasonAdopted},
		},
		"a live Object's, never taken": {
			manifest: configMapManifest, policy: kubernetesv1.AdoptAlways, remote: []client.Object{remoteConfigMap("live")}, local: []client.Object{liveObject},
			reason: common.ReasonRemoteObjectConflict, data: "old", owner: "live",
		},
		"a live application resource's, never taken": {
			manifest: configMapManifest, policy: kubernetesv1.AdoptOrphaned, remote: []client.Object{remoteConfigMap("live")}, local: []client.Object{liveResource},
			reason: common.ReasonRemoteObjectConflict, data: "old", owner: "live",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(targetCluster(tc.remote...), append(tc.local, providerConfig())...)
			o := newObject(tc.manifest)
			o.Spec.AdoptionPolicy = tc.policy
			ext, err := f.r.Connect(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ext.Apply(context.Background(), o)
			type result struct{ Reason, Data, Owner string }
			got := result{Reason: reason(err)}
			if cm := f.remoteObject(configMapGVK, "apps", "cfg"); cm != nil {
				got.Data, _, _ = unstructured.NestedString(cm.Object, "data", "k")
				got.Owner = cm.GetAnnotations()[common.RemoteOwnerAnnotation]
			}
			if diff := cmp.Diff(result{tc.reason, tc.data, tc.owner}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.events, f.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObjectAtProvider: the remote object's status is copied into status.atProvider, and
// connection details are read from it.
func TestObjectAtProvider(t *testing.T) {
	widget := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)},
		"status": map[string]any{"phase": "Ready", "endpoint": "w.apps:80"}}}
	widget.SetGroupVersionKind(widgetGVK)
	widget.SetNamespace("apps")
	widget.SetName("w")
	widget.SetAnnotations(map[string]string{common.RemoteOwnerAnnotation: string(objUID)})
	f := newFixture(targetCluster(widget), providerConfig())
	o := newObject(`{"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"namespace": "apps", "name": "w"}, "spec": {"size": 2}}`)
	o.Spec.ForProvider.ConnectionDetails = []kubernetesv1.ConnectionDetail{{Key: "endpoint", FieldPath: "status.endpoint"}}
	ext, err := f.r.Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := ext.Apply(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]byte{"endpoint": []byte("w.apps:80")}, applied.ConnectionDetails); diff != "" {
		t.Errorf("connection details (-want +got):\n%s", diff)
	}
	if o.Status.AtProvider == nil || string(o.Status.AtProvider.Raw) != `{"endpoint":"w.apps:80","phase":"Ready"}` {
		t.Errorf("status.atProvider = %v", o.Status.AtProvider)
	}
	obs, err := ext.Observe(context.Background(), o)
	if err != nil || obs.UpToDate {
		t.Errorf("Observe = %+v, %v: an Object is applied at every look", obs, err)
	}
}

func TestConnectionDetails(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": "apps", "name": "db"},
		"spec":     map[string]any{"port": int64(5432), "host": "", "secret": "db-creds", "other": "none"}}}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "db-creds"}, Data: map[string][]byte{"password": []byte("pw")}}
	fromSecret := func(nameField, key string) kubernetesv1.ConnectionDetail {
		return kubernetesv1.ConnectionDetail{Key: "out", FromSecret: &kubernetesv1.RemoteSecretKeySelector{NameFieldPath: nameField, Key: key}}
	}
	cases := map[string]struct {
		details []kubernetesv1.ConnectionDetail
		want    map[string][]byte
		reason  string
	}{
		"none":                      {want: map[string][]byte{}},
		"a field, as text":          {details: []kubernetesv1.ConnectionDetail{{Key: "port", FieldPath: "spec.port"}}, want: map[string][]byte{"port": []byte("5432")}},
		"a field not there yet":     {details: []kubernetesv1.ConnectionDetail{{Key: "ip", FieldPath: "status.ip"}}, reason: "WaitingForConnectionDetails"},
		"an empty field":            {details: []kubernetesv1.ConnectionDetail{{Key: "host", FieldPath: "spec.host"}}, reason: "WaitingForConnectionDetails"},
		"a key of the Secret named": {details: []kubernetesv1.ConnectionDetail{fromSecret("spec.secret", "password")}, want: map[string][]byte{"out": []byte("pw")}},
		"a key the Secret lacks":    {details: []kubernetesv1.ConnectionDetail{fromSecret("spec.secret", "user")}, reason: "WaitingForConnectionDetails"},
		"a Secret not there yet":    {details: []kubernetesv1.ConnectionDetail{fromSecret("spec.other", "password")}, reason: "WaitingForConnectionDetails"},
		"no Secret named yet":       {details: []kubernetesv1.ConnectionDetail{fromSecret("status.secret", "password")}, reason: "WaitingForConnectionDetails"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := newObject(configMapManifest)
			o.Spec.ForProvider.ConnectionDetails = tc.details
			got, err := connectionDetails(context.Background(), targetCluster(creds), o, obj)
			if diff := cmp.Diff([]any{tc.want, tc.reason}, []any{got, reason(err)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestObjectConnect: an Object reaches the cluster of the ProviderConfig it names in its
// own namespace, and only when its credentials are in that namespace too.
func TestObjectConnect(t *testing.T) {
	elsewhere := providerConfig()
	elsewhere.Spec.CredentialsSecretRef.Namespace = "kube-system"
	noCreds := providerConfig()
	noCreds.Spec.CredentialsSecretRef.Name = "missing"
	cases := map[string]struct {
		local  []client.Object
		ref    string
		reason string
	}{
		"its ProviderConfig":                          {local: []client.Object{providerConfig()}, ref: pcName},
		"no such ProviderConfig":                      {ref: pcName, reason: "ClusterNotFound"},
		"no providerRef":                              {local: []client.Object{providerConfig()}, reason: "ClusterNotFound"},
		"credentials in another namespace":            {local: []client.Object{elsewhere}, ref: pcName, reason: "ReferenceNotAllowed"},
		"a ProviderConfig whose credentials are gone": {local: []client.Object{noCreds}, ref: pcName, reason: "CredentialsNotFound"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(targetCluster(), tc.local...)
			o := newObject(configMapManifest)
			o.Spec.ProviderRef.Name = tc.ref
			ext, err := f.r.Connect(context.Background(), o)
			if reason(err) != tc.reason || (err == nil) != (ext != nil) {
				t.Errorf("Connect = %v, %v; want reason %q", ext, err, tc.reason)
			}
		})
	}
}
