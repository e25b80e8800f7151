package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var now = time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)

// sample is a small tree: a claim, a forbidden resource below it, and a Secret.
func sample() *Node {
	hourAgo := metav1.NewTime(now.Add(-time.Hour))
	return &Node{APIVersion: "storage.terraplane.io/v1alpha1", Kind: "Bucket", Namespace: "demo", Name: "photos", Display: "Bucket/photos",
		Ready: "True", Synced: "True", Reason: "Available", Created: &hourAgo, Children: []*Node{
			{Kind: "S3Bucket", Namespace: "terraplane-system", Name: "x", Display: "S3Bucket/x", Error: "Forbidden", Message: "s3buckets is forbidden:\n  user alice",
				Children: []*Node{{Kind: "Secret", Namespace: "terraplane-system", Name: "deep", Display: "Secret/deep"}}},
			{Kind: "Secret", Namespace: "demo", Name: "photos-bucket", Display: "Secret/photos-bucket"},
		}}
}

func TestPrintTable(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   string
	}{{"", `NAME                     NAMESPACE          READY  SYNCED  STATUS     AGE
Bucket/photos            demo               True   True    Available  60m
├─ S3Bucket/x            terraplane-system  -      -       Forbidden  -
│  └─ Secret/deep        terraplane-system  -      -       -          -
└─ Secret/photos-bucket  demo               -      -       -          -
`}, {"wide", `NAME                     NAMESPACE          READY  SYNCED  STATUS     AGE  MESSAGE
Bucket/photos            demo               True   True    Available  60m  -
├─ S3Bucket/x            terraplane-system  -      -       Forbidden  -    s3buckets is forbidden: user alice
│  └─ Secret/deep        terraplane-system  -      -       -          -    -
└─ Secret/photos-bucket  demo               -      -       -          -    -
`}} {
		t.Run(tc.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Print(&b, sample(), tc.format, now); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrintData: json and yaml give the tree back as data.
func TestPrintData(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		var b bytes.Buffer
		if err := Print(&b, sample(), format, now); err != nil {
			t.Fatal(err)
		}
		var got Node
		var err error
		if format == "json" {
			err = json.Unmarshal(b.Bytes(), &got)
		} else {
			err = yaml.UnmarshalStrict(b.Bytes(), &got)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, b.String())
		}
		want := sample()
		clear := func(n *Node) { n.Display = "" }
		clear(want)
		for _, c := range want.Children {
			clear(c)
			for _, g := range c.Children {
				clear(g)
			}
		}
		if diff := cmp.Diff(want, &got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", format, diff)
		}
	}
}

func TestPrintDot(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, sample(), "dot", now); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"digraph trace {",
		`n0 [label="Bucket/photos\nnamespace: demo\nReady=True Synced=True\nAvailable", fillcolor="#d4edda"];`,
		`n1 [label="S3Bucket/x\nnamespace: terraplane-system\nForbidden", fillcolor="#e2e3e5"];`,
		"n0 -> n1;", "n1 -> n2;", "n0 -> n3;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dot output lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "}\n") {
		t.Errorf("dot output is not closed:\n%s", got)
	}
}

func TestPrintUnknownFormat(t *testing.T) {
	if err := Print(&bytes.Buffer{}, sample(), "xml", now); err == nil {
		t.Error("an unknown format is an error")
	}
}
