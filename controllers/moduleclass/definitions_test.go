package moduleclass

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

func TestForDefinition(t *testing.T) {
	cases := map[string]struct {
		obj  client.Object
		want []reconcile.Request
	}{
		"a class named without a namespace is in terraplane-system": {
			obj:  definition("dbs.example.org", "", "db", nil, nil),
			want: []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: definitionNamespace, Name: "db"}}},
		},
		"a class in the namespace named": {
			obj:  definition("dbs.example.org", "team-a", "db", nil, nil),
			want: []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "team-a", Name: "db"}}},
		},
		"a definition written as a schema names no class": {obj: &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "dbs.example.org"}}},
		"another kind of object":                          {obj: &corev1.ConfigMap{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, (&Reconciler{}).forDefinition(context.Background(), tc.obj)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSourceNames(t *testing.T) {
	secret := &common.LocalReference{Name: "creds"}
	cases := map[string]struct {
		src               terraformv1.ModuleSource
		configMap, secret string
	}{
		"configMap":            {src: terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "mod"}}, configMap: "mod"},
		"git with a secret":    {src: terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "https://g", SecretRef: secret}}, secret: "creds"},
		"git without a secret": {src: terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "https://g"}}},
		"oci with a secret":    {src: terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: "r", SecretRef: secret}}, secret: "creds"},
		"oci without a secret": {src: terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: "r"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tmpl := terraformv1.ModuleClassSpecTemplate{}
			tmpl.Source = tc.src
			first := func(names []string) string {
				if len(names) == 0 {
					return ""
				}
				return names[0]
			}
			if got := [2]string{first(configMapOf(tmpl)), first(secretOf(tmpl))}; got != [2]string{tc.configMap, tc.secret} {
				t.Errorf("configMapOf, secretOf = %q, want %q", got, [2]string{tc.configMap, tc.secret})
			}
		})
	}
}

// TestUsing: a ConfigMap or Secret reaches the classes of its own namespace whose source names it.
func TestUsing(t *testing.T) {
	class := func(ns, name string, src terraformv1.ModuleSource) *terraformv1.ModuleClass {
		c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		c.SpecTemplate.Source = src
		return c
	}
	fromCM := func(n string) terraformv1.ModuleSource {
		return terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: n}}
	}
	fromGit := func(n string) terraformv1.ModuleSource {
		return terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "https://g", SecretRef: &common.LocalReference{Name: n}}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(
		class("a", "one", fromCM("mod")), class("a", "two", fromCM("mod")), class("a", "other", fromCM("other")),
		class("b", "elsewhere", fromCM("mod")), class("a", "git", fromGit("mod")), class("a", "git-creds", fromGit("creds")),
	).Build()
	r := &Reconciler{client: c}
	req := func(ns, name string) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
	}
	cases := map[string]struct {
		mapper func(context.Context, client.Object) []reconcile.Request
		obj    client.Object
		want   []reconcile.Request
	}{
		"ConfigMap a/mod": {r.using(configMapOf), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "mod"}},
			[]reconcile.Request{req("a", "one"), req("a", "two")}},
		"ConfigMap b/mod": {r.using(configMapOf), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "mod"}},
			[]reconcile.Request{req("b", "elsewhere")}},
		"ConfigMap nobody reads": {r.using(configMapOf), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "unused"}}, nil},
		"Secret a/creds": {r.using(secretOf), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "creds"}},
			[]reconcile.Request{req("a", "git-creds")}},
		"Secret named like a ConfigMap": {r.using(secretOf), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "mod"}},
			[]reconcile.Request{req("a", "git")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.mapper(context.Background(), tc.obj)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
