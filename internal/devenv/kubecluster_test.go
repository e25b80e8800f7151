package devenv

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestDemoClusterObjects: the module's files travel in the ConfigMap, the ModuleClass
// names it and publishes the kubeconfig, and the portable class points at it.
func TestDemoClusterObjects(t *testing.T) {
	objs, err := DemoClusterObjects(DemoClusterOptions{AdminNamespace: "admin", AppNamespace: "apps", Class: "local", BinDir: "/bin", StateDir: "/state", Default: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 4 {
		t.Fatalf("%d objects, want 4", len(objs))
	}
	cm, mc, class := objs[0].(*corev1.ConfigMap), objs[2].(*terraformv1.ModuleClass), objs[3].(*computev1.KubernetesClusterClass)
	for _, f := range []string{"main.tf", "outputs.tf", "variables.tf", "versions.tf", "start.sh", "stop.sh", ".terraform.lock.hcl"} {
		if cm.Data[f] == "" {
			t.Errorf("ConfigMap lacks %s", f)
		}
	}
	if mc.SpecTemplate.Source.ConfigMap == nil || mc.SpecTemplate.Source.ConfigMap.Name != cm.Name || mc.Namespace != "admin" {
		t.Errorf("ModuleClass source %+v in %s", mc.SpecTemplate.Source, mc.Namespace)
	}
	if got := string(mc.SpecTemplate.ForProvider.Raw); got != `{"bin_dir":"/bin","state_dir":"/state"}` {
		t.Errorf("forProvider %s", got)
	}
	var keys []string
	for _, c := range mc.SpecTemplate.Connection {
		keys = append(keys, c.FromOutput+"->"+c.ToKey)
	}
	if got := strings.Join(keys, ","); got != "kubeconfig->kubeconfig,endpoint->endpoint,token->token" {
		t.Errorf("connection %s", got)
	}
	if mc.AllowedNamespaces == nil || len(mc.AllowedNamespaces.Names) != 1 || mc.AllowedNamespaces.Names[0] != "apps" {
		t.Errorf("allowedNamespaces %+v", mc.AllowedNamespaces)
	}
	if class.Namespace != "apps" || class.Name != "local" || class.ClassRef.Name != mc.Name || class.ClassRef.Namespace != "admin" || class.Labels["terraplane.io/default"] != "true" {
		t.Errorf("class %+v", class)
	}
}
