package kubernetes

import (
	"context"
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// The control cluster's objects every test starts from: ProviderConfig team-a/target,
// whose credentials are Secret team-a/target-creds, and the Object's UID.
const (
	ns       = "team-a"
	pcName   = "target"
	credName = "target-creds"
	objUID   = types.UID("obj-uid")
	host     = "https://target.example:6443"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.org", Version: "v1", Kind: "Widget"}

func localScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = kubernetesv1.AddToScheme(s)
	_ = workloadv1.AddToScheme(s)
	_ = computev1.AddToScheme(s)
	return s
}

// fakeClusters is a ClusterSource that knows one target cluster per credentials Secret.
type fakeClusters map[types.NamespacedName]*remote.Cluster

func (f fakeClusters) Cluster(_ context.Context, key types.NamespacedName) (*remote.Cluster, error) {
	if c, ok := f[key]; ok {
		return c, nil
	}
	return nil, resource.UserErrorf("CredentialsNotFound", "connection Secret %s does not exist", key)
}

// targetCluster is a fake target cluster holding objs, which serves ConfigMaps, Secrets
// and Widgets in namespaces and Namespaces at cluster scope.
func targetCluster(objs ...client.Object) *remote.Cluster {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, k := range []string{"ConfigMap", "Secret"} {
		mapper.Add(corev1.SchemeGroupVersion.WithKind(k), meta.RESTScopeNamespace)
	}
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	mapper.Add(widgetGVK, meta.RESTScopeNamespace)
	return &remote.Cluster{Client: fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).WithObjects(objs...).Build(), Host: host}
}

func providerConfig() *kubernetesv1.ProviderConfig {
	pc := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pcName, Generation: 2}}
	pc.Spec.CredentialsSecretRef.Name = credName
	return pc
}

// connectionSecret is the connection Secret a managed resource with uid wrote.
func connectionSecret(name string, uid types.UID) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{resource.ManagedLabel: string(uid)}}}
}

// fixture is the Object Connector over a fake control cluster and a fake target.
type fixture struct {
	local  client.Client
	target *remote.Cluster
	r      *objects
	events *events.FakeRecorder
}

// newFixture stores local in the control cluster; the target cluster is reached through
// the ProviderConfig's Secret.
func newFixture(target *remote.Cluster, local ...client.Object) *fixture {
	c := fake.NewClientBuilder().WithScheme(localScheme()).WithObjects(local...).Build()
	rec := events.NewFakeRecorder(10)
	targets := &Targets{Local: c, Cache: fakeClusters{{Namespace: ns, Name: credName}: target}}
	return &fixture{local: c, target: target, events: rec,
		r: &objects{native{client: c, targets: targets, opts: Options{}.WithDefaults(), recorder: resource.RecorderFor(rec)}}}
}

// newObject is Object team-a/obj using ProviderConfig target, managing manifest.
func newObject(manifest string) *kubernetesv1.Object {
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "obj", UID: objUID}}
	o.Spec.ProviderRef = &common.LocalReference{Name: pcName}
	o.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "obj-conn"}
	if err := json.Unmarshal([]byte(manifest), &o.Spec.ForProvider.Manifest); err != nil {
		panic(err)
	}
	return o
}

// remoteObject reads a remote object; nil when it does not exist.
func (f *fixture) remoteObject(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := f.target.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		return nil
	}
	return u
}

// eventReasons are the "type reason" of the events sent so far.
func (f *fixture) eventReasons() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, strings.Join(strings.Fields(e)[:2], " "))
		default:
			return out
		}
	}
}

// reason is the reason of a user error or a wait; "" for nil, "error" for anything else.
func reason(err error) string {
	if err == nil {
		return ""
	}
	if u, ok := resource.AsUserError(err); ok {
		return u.Reason
	}
	if w, ok := resource.AsWaiting(err); ok {
		return w.Reason
	}
	return "error"
}
