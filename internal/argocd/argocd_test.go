package argocd

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"terraplane.io/terraplane/internal/kinds"
)

var update = flag.Bool("update", false, "rewrite charts/terraplane/argocd/argocd-cm.yaml")

const (
	scriptDir = "../../charts/terraplane/argocd"
	cmFile    = scriptDir + "/argocd-cm.yaml"
)

// scripts reads the chart's health scripts.
func scripts(t *testing.T) map[Family]string {
	t.Helper()
	out, err := ReadScripts(scriptDir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// terraplaneKinds are the kinds of the registry and every other kind with conditions.
func terraplaneKinds() []Kind { return All(kinds.NewRegistry(nil)) }

// TestConfigMap: the chart's argocd-cm holds, for every Terraplane kind that reports
// conditions, its family's script; go test -update rewrites it.
func TestConfigMap(t *testing.T) {
	want, err := ConfigMap(terraplaneKinds(), scripts(t))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(cmFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(cmFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Fatalf("%s is stale: go test ./internal/argocd -update (-want +got):\n%s", cmFile, diff)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(got, cm); err != nil {
		t.Fatalf("%s: %v", cmFile, err)
	}
	s := scripts(t)
	for key, family := range map[string]Family{
		"resource.customizations.health.storage.terraplane.io_Bucket":                 Claims,
		"resource.customizations.health.database.terraplane.io_PostgreSQLInstance":    Claims,
		"resource.customizations.health.storage.aws.terraplane.io_S3Bucket":           Managed,
		"resource.customizations.health.terraform.terraplane.io_Module":               Managed,
		"resource.customizations.health.kubernetes.terraplane.io_Object":              Managed,
		"resource.customizations.health.terraform.terraplane.io_ModuleClass":          Ready,
		"resource.customizations.health.storage.aws.terraplane.io_S3BucketClass":      Ready,
		"resource.customizations.health.aws.terraplane.io_Provider":                   Ready,
		"resource.customizations.health.kubernetes.terraplane.io_ProviderConfig":      Ready,
		"resource.customizations.health.apiextensions.terraplane.io_ClaimDefinition":  Ready,
		"resource.customizations.health.stacks.terraplane.io_StackInstall":            Ready,
		"resource.customizations.health.workload.terraplane.io_KubernetesApplication": Ready,
	} {
		if cm.Data[key] != s[family] {
			t.Errorf("%s: want the %s script", key, family)
		}
	}
	for _, none := range []string{"storage.terraplane.io_BucketClass", "kubernetes.terraplane.io_ObjectClass", "terraform.terraplane.io_ClassRevision",
		"terraform.terraplane.io_Plan"} {
		if _, ok := cm.Data["resource.customizations.health."+none]; ok {
			t.Errorf("%s reports no status, yet has a health script", none)
		}
	}
}

// TestDocsShowTheScripts: docs/gitops.md shows the prelude and each family's script as
// the chart ships them.
func TestDocsShowTheScripts(t *testing.T) {
	page, err := os.ReadFile("../../docs/gitops.md")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{PreludeFile}
	for _, f := range Families {
		files = append(files, f.File())
	}
	for _, file := range files {
		script, err := os.ReadFile(filepath.Join(scriptDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "```lua\n"+string(script)+"```") {
			t.Errorf("docs/gitops.md does not show %s as the chart ships it", file)
		}
	}
}

// TestScriptsStartWithThePrelude: the claim and managed scripts are the prelude, then
// their own file, so each runs on its own in Argo CD; the others are their own file.
func TestScriptsStartWithThePrelude(t *testing.T) {
	prelude, err := os.ReadFile(filepath.Join(scriptDir, PreludeFile))
	if err != nil {
		t.Fatal(err)
	}
	for f, script := range scripts(t) {
		own, err := os.ReadFile(filepath.Join(scriptDir, f.File()))
		if err != nil {
			t.Fatal(err)
		}
		want := string(own)
		if f.Preluded() {
			want = string(prelude) + want
		}
		if diff := cmp.Diff(want, script); diff != "" {
			t.Errorf("%s script (-want +got):\n%s", f, diff)
		}
	}
	if _, err := ReadScripts(t.TempDir()); err == nil {
		t.Error("ReadScripts of a directory without scripts: no error")
	}
}
