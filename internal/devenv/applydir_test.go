package devenv

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// recording is a fake API server that records every apply as "Kind name by owner[, force]".
func recording(fail string) (client.Client, *[]string) {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	var applied []string
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).Build(), interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			o := &client.ApplyOptions{}
			o.ApplyOptions(opts)
			var u struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			if b, err := json.Marshal(obj); err != nil || json.Unmarshal(b, &u) != nil {
				return errors.New("not an object")
			}
			if u.Metadata.Name == fail {
				return errors.New("refused")
			}
			line := u.Metadata.Name + " by " + o.FieldManager
			if o.Force != nil && *o.Force {
				line += ", force"
			}
			applied = append(applied, line)
			return c.Apply(ctx, obj, opts...)
		},
	})
	return c, &applied
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetName())
	}
	return out
}

const twoConfigMaps = `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: default}
data: {k: v}
---
# nothing but a comment
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: default}
`

func TestApplyYAML(t *testing.T) {
	cases := map[string]struct {
		raw     string
		fail    string
		want    []string // applied, in order
		wantErr string
	}{
		"every document, empty ones skipped": {raw: twoConfigMaps, want: []string{"a by terraplane-dev, force", "b by terraplane-dev, force"}},
		"JSON":                               {raw: `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j", "namespace": "default"}}`, want: []string{"j by terraplane-dev, force"}},
		"nothing":                            {raw: ""},
		"a document that is no YAML":         {raw: "kind: [", wantErr: "decode"},
		"a refused object stops the rest":    {raw: twoConfigMaps, fail: "a", wantErr: "apply ConfigMap a: refused"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, applied := recording(tc.fail)
			_, err := ApplyYAML(context.Background(), c, []byte(tc.raw))
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want one saying %q", err, tc.wantErr)
			}
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *applied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
		})
	}
	c, _ := recording("")
	if _, err := ApplyYAML(context.Background(), c, []byte(twoConfigMaps)); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "a"}, cm); err != nil || cm.Data["k"] != "v" {
		t.Errorf("ConfigMap a on the server: %v, %v", cm.Data, err)
	}
}

// TestApplyDir: the *.yaml files of a directory in name order, each object edited first.
func TestApplyDir(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"20-b.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: second, namespace: default}\n",
		"10-a.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first, namespace: default}\n",
		"notes.txt":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored, namespace: default}\n",
		"30-c.yml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored-too, namespace: default}\n",
		"40-ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	label := func(obj *unstructured.Unstructured) error {
		if obj.GetKind() == "Namespace" {
			return errors.New("no namespaces here")
		}
		obj.SetLabels(map[string]string{"edited": "yes"})
		return nil
	}
	c, _ := recording("")
	objs, err := ApplyDir(context.Background(), c, dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ConfigMap first", "ConfigMap second", "Namespace team"}, names(objs)); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	_, err = ApplyDirWith(context.Background(), c, dir, label)
	if err == nil || !strings.Contains(err.Error(), "40-ns.yaml: Namespace team: no namespaces here") {
		t.Errorf("an edit that fails: %v; want the file, the object and the edit's error", err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "second"}, cm); err != nil || cm.Labels["edited"] != "yes" {
		t.Errorf("ConfigMap second: labels %v, %v; want it edited before it was applied", cm.Labels, err)
	}
}
