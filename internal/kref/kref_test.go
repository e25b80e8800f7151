package kref

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// mapper knows a claim, a managed kind, two Providers and a kind with an odd plural,
// as discovery would serve them.
func mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range []struct{ group, kind, plural string }{
		{"storage.terraplane.io", "Bucket", "buckets"},
		{"storage.aws.terraplane.io", "S3Bucket", "s3buckets"},
		{"aws.terraplane.io", "Provider", "providers"},
		{"postgresql.terraplane.io", "Provider", "providers"},
		{"terraform.terraplane.io", "ModuleClass", "moduleclasses"},
	} {
		gvk := schema.GroupVersionKind{Group: k.group, Version: "v1alpha1", Kind: k.kind}
		m.AddSpecific(gvk, gvk.GroupVersion().WithResource(k.plural), gvk.GroupVersion().WithResource(lower(k.kind)), meta.RESTScopeNamespace)
	}
	return m
}

func lower(s string) string { return strings.ToLower(s) }

func TestMapping(t *testing.T) {
	for _, tc := range []struct {
		arg, want string // want: Kind.group, or "error"
	}{
		{"Bucket", "Bucket.storage.terraplane.io"},
		{"bucket", "Bucket.storage.terraplane.io"},
		{"BUCKETS", "Bucket.storage.terraplane.io"},
		{"s3bucket", "S3Bucket.storage.aws.terraplane.io"},
		{"S3Bucket.storage.aws.terraplane.io", "S3Bucket.storage.aws.terraplane.io"},
		{"s3buckets.storage.aws.terraplane.io", "S3Bucket.storage.aws.terraplane.io"},
		{"s3buckets.v1alpha1.storage.aws.terraplane.io", "S3Bucket.storage.aws.terraplane.io"},
		{"moduleclasses", "ModuleClass.terraform.terraplane.io"},
		{"provider.aws.terraplane.io", "Provider.aws.terraplane.io"},
		{"Provider.postgresql.terraplane.io", "Provider.postgresql.terraplane.io"},
		{"provider", "error"},
		{"gizmo", "error"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			m, err := Mapping(mapper(), tc.arg)
			got := "error"
			if err == nil {
				got = m.GroupVersionKind.GroupKind().String()
			}
			if got != tc.want {
				t.Errorf("%s maps to %s (%v), want %s", tc.arg, got, err, tc.want)
			}
		})
	}
	_, err := Mapping(mapper(), "provider")
	if err == nil || !cmp.Equal(err.Error(), `"provider" names more than one kind: qualify it with its group, as one of provider.aws.terraplane.io, provider.postgresql.terraplane.io`) {
		t.Errorf("an ambiguous kind names the choices: %v", err)
	}
}

// TestMappingPrioritised: a mapper that picks one group by priority (as discovery's
// does) still refuses a name two groups serve.
func TestMappingPrioritised(t *testing.T) {
	prioritised := meta.PriorityRESTMapper{Delegate: mapper(), KindPriority: []schema.GroupVersionKind{
		{Group: "aws.terraplane.io", Version: meta.AnyVersion, Kind: meta.AnyKind},
	}}
	if gvk, err := prioritised.KindFor(schema.GroupVersionResource{Resource: "provider"}); err != nil || gvk.Group != "aws.terraplane.io" {
		t.Fatalf("the mapper under test should pick a group by itself: %v %v", gvk, err)
	}
	_, err := Mapping(prioritised, "provider")
	if err == nil || !strings.Contains(err.Error(), "provider.postgresql.terraplane.io") {
		t.Errorf("an ambiguous name resolved silently: %v", err)
	}
	if m, err := Mapping(prioritised, "bucket"); err != nil || m.GroupVersionKind.Kind != "Bucket" {
		t.Errorf("bucket: %v %v", m, err)
	}
}

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"bucket/photos"}, "bucket/photos", false},
		{[]string{"bucket", "photos"}, "bucket/photos", false},
		{[]string{"photos"}, "", true},
		{[]string{"bucket/photos", "more"}, "", true},
		{[]string{"a", "b", "c"}, "", true},
	} {
		got, err := Args(tc.args)
		if got != tc.want || IsUsage(err) != tc.usage {
			t.Errorf("Args(%q) = %q, %v; want %q (usage error %v)", tc.args, got, err, tc.want, tc.usage)
		}
	}
	for ref, ok := range map[string]bool{"bucket/photos": true, "bucket/": false, "/photos": false, "bucket": false, "a/b/c": false} {
		if _, _, err := Split(ref); (err == nil) != ok || err != nil && !IsUsage(err) {
			t.Errorf("Split(%q): %v", ref, err)
		}
	}
}

func TestNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     Namespaces
		admin bool
		want  string
	}{
		{"-n wins for a claim", Namespaces{Explicit: "x", Context: "ctx", Admin: "adm"}, false, "x"},
		{"-n wins for a managed kind", Namespaces{Explicit: "x", Context: "ctx", Admin: "adm"}, true, "x"},
		{"a claim follows the context", Namespaces{Context: "ctx", Admin: "adm"}, false, "ctx"},
		{"a managed kind defaults to the admin namespace", Namespaces{Context: "ctx", Admin: "adm"}, true, "adm"},
	} {
		if got := tc.n.For(tc.admin); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		cats        []string
		nonPortable bool
		want        bool
	}{
		{[]string{"terraplane", "managed"}, false, true},
		{[]string{"terraplane", "provider"}, false, true},
		{[]string{"terraplane", "class"}, true, true},
		{[]string{"terraplane", "class"}, false, false},
		{[]string{"terraplane", "claim"}, false, false},
		{nil, false, false},
	} {
		if got := AdminKind(tc.cats, tc.nonPortable); got != tc.want {
			t.Errorf("AdminKind(%v, %v) = %v", tc.cats, tc.nonPortable, got)
		}
	}
}

// failing is a RESTMapper whose discovery fails.
type failing struct{ meta.RESTMapper }

func (failing) KindFor(schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return schema.GroupVersionKind{}, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
}

// TestMappingDiscoveryFails: a server that cannot be reached is not "no such kind".
func TestMappingDiscoveryFails(t *testing.T) {
	_, err := Mapping(failing{mapper()}, "bucket")
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("the discovery error reaches the user: %v", err)
	}
}
