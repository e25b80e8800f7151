package trace

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var moduleGVK = schema.GroupVersionKind{Group: "terraform.terraplane.io", Version: "v1alpha1", Kind: "Module"}

// pendingObjects: an S3Bucket awaiting approval in the admin namespace, a Module
// refused in team-a, a Module whose plan was applied in team-a, and a Module awaiting
// approval in team-b.
func pendingObjects(t *testing.T) []client.Object {
	mg := func(kind, apiVersion, ns, name, status string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s, namespace: %s}\nspec: {source: {configMap: {name: x}}}\nstatus:\n%s", apiVersion, kind, name, ns, status)
	}
	return objects(t, strings.Join([]string{
		mg("S3Bucket", "storage.aws.terraplane.io/v1alpha1", "terraplane-system", "photos", planUpdate+conditionsAt+fmt.Sprintf(syncedFalse, "AwaitingApproval")),
		strings.Replace(mg("Module", "terraform.terraplane.io/v1alpha1", "team-a", "net", planUpdate+conditionsAt+fmt.Sprintf(syncedFalse, "DestructiveChangeRefused")),
			"spec: {", "spec: {claimRef: {apiVersion: network.example.org/v1, kind: Network, namespace: team-a, name: vpc}, ", 1),
		mg("Module", "terraform.terraplane.io/v1alpha1", "team-a", "done", planApplied),
		mg("Module", "terraform.terraplane.io/v1alpha1", "team-b", "dns", planUpdate+conditionsAt+fmt.Sprintf(syncedFalse, "AwaitingApproval")),
	}, "\n---\n"))
}

func TestListApprovals(t *testing.T) {
	kinds := []schema.GroupVersionKind{s3GVK, moduleGVK}
	for _, tc := range []struct {
		name      string
		forbidden []string
		scope     Scope
		want      []string
		where     []string
		wantErr   bool
	}{{
		name:  "an admin sees every namespace",
		scope: Scope{Fallback: []string{"terraplane-system"}},
		want:  []string{"team-a/Module/net DestructiveChangeRefused", "team-b/Module/dns AwaitingApproval", "terraplane-system/S3Bucket/photos AwaitingApproval"},
	}, {
		name:  "-n is the one namespace looked in",
		scope: Scope{Namespace: "team-a", Fallback: []string{"terraplane-system"}},
		want:  []string{"team-a/Module/net DestructiveChangeRefused"},
	}, {
		name: "a tenant who may not list all namespaces falls back to the admin namespace and its own", forbidden: []string{"*", "terraplane-system"},
		scope: Scope{Fallback: []string{"terraplane-system", "team-a"}},
		want:  []string{"team-a/Module/net DestructiveChangeRefused"}, where: []string{"terraplane-system", "team-a"},
	}, {
		name: "nothing listable is an error", forbidden: []string{"*", "terraplane-system", "team-a"},
		scope: Scope{Fallback: []string{"terraplane-system", "team-a"}}, wantErr: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ListApprovals(context.Background(), fakeReader(pendingObjects(t), tc.forbidden...), kinds, tc.scope)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", l)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range l.Items {
				got = append(got, a.Namespace+"/"+a.Kind+"/"+a.Name+" "+a.Reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("approvals (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.where, l.Namespaces); diff != "" {
				t.Errorf("namespaces looked in (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrintApprovals: one line a pending plan, naming the claim its resource serves.
func TestPrintApprovals(t *testing.T) {
	l, err := ListApprovals(context.Background(), fakeReader(pendingObjects(t)), []schema.GroupVersionKind{moduleGVK}, Scope{Namespace: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := PrintApprovals(&b, l, "", now); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE  RESOURCE    CLAIM               PLAN              REASON                    CHANGES        AGE\n" +
		"team-a     Module/net  network/team-a/vpc  aaaa000000000002  DestructiveChangeRefused  +1 ~2 -3 -/+4  60m\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b.Reset()
	if err := PrintApprovals(&b, l, "json", now); err != nil || !strings.Contains(b.String(), `"planID": "aaaa000000000002"`) {
		t.Errorf("json: %v\n%s", err, b.String())
	}
}
