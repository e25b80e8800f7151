package integration

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestServedAtV1beta1: the kinds users write most are served at v1beta1 beside
// v1alpha1: objects created at v1alpha1 are listed, patched and read at v1beta1, and
// the patch reads back at v1alpha1.
func TestServedAtV1beta1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const ns = "versions"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	bucket := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}
	module := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"}}
	module.Spec.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "module"}
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}}
	class.SpecTemplate.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "module"}
	for _, o := range []client.Object{bucket, module, class} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
		gvk, err := env.Client.GroupVersionKindFor(o)
		g.Expect(err).NotTo(HaveOccurred())
		beta := schema.GroupVersionKind{Group: gvk.Group, Version: "v1beta1", Kind: gvk.Kind}

		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(beta.GroupVersion().WithKind(gvk.Kind + "List"))
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed(), "list %s", beta)
		g.Expect(list.Items).To(ContainElement(HaveField("Object", HaveKeyWithValue("apiVersion", beta.GroupVersion().String()))))

		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(beta)
		u.SetNamespace(ns)
		u.SetName(o.GetName())
		g.Expect(env.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"patched-at":"v1beta1"}}}`)))).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), u)).To(Succeed())
		g.Expect(u.GetAPIVersion()).To(Equal(beta.GroupVersion().String()))

		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("patched-at", "v1beta1"), "%s patched at v1beta1 reads back at v1alpha1", gvk.Kind)
	}
	g.Expect(module.Spec.Source.ConfigMap).To(HaveField("Name", "module"), "nothing is lost between the versions")
}

// TestStorageVersionMigration: objects stored while v1alpha1 was the only version are read
// and updated at v1beta1 once the CRD stores v1beta1, as after an upgrade. The Bucket CRD
// make generate writes is installed under a group of its own, first as v1alpha1 alone.
func TestStorageVersionMigration(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	raw, err := os.ReadFile("../../config/crd/bases/storage.terraplane.io_buckets.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	crd := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal(raw, &crd.Object)).To(Succeed())
	const group = "migration.terraplane.io"
	crd.SetName("buckets." + group)
	g.Expect(unstructured.SetNestedField(crd.Object, group, "spec", "group")).To(Succeed())
	g.Expect(unstructured.SetNestedStringSlice(crd.Object, nil, "spec", "names", "categories")).To(Succeed())
	both, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	g.Expect(both).To(HaveLen(2), "the Bucket CRD serves v1alpha1 and v1beta1")
	var alphaOnly []any
	for _, v := range both {
		if v.(map[string]any)["name"] == "v1alpha1" {
			alpha := runtime.DeepCopyJSONValue(v).(map[string]any)
			alpha["storage"] = true
			alphaOnly = append(alphaOnly, alpha)
		}
	}
	beforeUpgrade := crd.DeepCopy()
	g.Expect(unstructured.SetNestedSlice(beforeUpgrade.Object, alphaOnly, "spec", "versions")).To(Succeed())
	g.Expect(env.Client.Create(ctx, beforeUpgrade)).To(Succeed())
	defer func() { _ = env.Client.Delete(ctx, beforeUpgrade) }()

	alpha := schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: "Bucket"}
	g.Expect(env.Namespace(ctx, "migration")).To(Succeed())
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(alpha)
	old.SetNamespace("migration")
	old.SetName("stored-as-alpha")
	g.Expect(unstructured.SetNestedField(old.Object, "orders", "spec", "writeConnectionSecretToRef", "name")).To(Succeed())
	g.Eventually(func() error { return env.Client.Create(ctx, old) }).WithTimeout(30 * time.Second).Should(Succeed())

	// the CRD is upgraded to store v1beta1
	g.Eventually(func(g Gomega) {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(crd.GroupVersionKind())
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: crd.GetName()}, current)).To(Succeed())
		g.Expect(unstructured.SetNestedSlice(current.Object, both, "spec", "versions")).To(Succeed())
		g.Expect(env.Client.Update(ctx, current)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())

	beta := alpha
	beta.Version = "v1beta1"
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(beta)
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(old), u) }).WithTimeout(30 * time.Second).Should(Succeed())
	secretName := func(u *unstructured.Unstructured) string {
		name, _, _ := unstructured.NestedString(u.Object, "spec", "writeConnectionSecretToRef", "name")
		return name
	}
	g.Expect(secretName(u)).To(Equal("orders"), "read at v1beta1")
	g.Expect(unstructured.SetNestedField(u.Object, "orders-v2", "spec", "writeConnectionSecretToRef", "name")).To(Succeed())
	g.Expect(env.Client.Update(ctx, u)).To(Succeed(), "updated at v1beta1, so stored at v1beta1")
	back := &unstructured.Unstructured{}
	back.SetGroupVersionKind(alpha)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(old), back)).To(Succeed())
	g.Expect(secretName(back)).To(Equal("orders-v2"), "read back at v1alpha1")
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(crd.GroupVersionKind())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: crd.GetName()}, current)).To(Succeed())
	stored, _, _ := unstructured.NestedStringSlice(current.Object, "status", "storedVersions")
	g.Expect(stored).To(Equal([]string{"v1alpha1", "v1beta1"}), "objects were stored as v1alpha1, and are now as v1beta1")
}
