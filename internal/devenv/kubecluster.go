package devenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/tfmodules"
)

// DemoClusterModule is the bundled module that starts a real etcd and kube-apiserver on
// this machine as a cluster of the demo cloud.
const DemoClusterModule = "demo/kubecluster"

// DemoClusterOptions say where the demo cloud's clusters are offered and what they run.
type DemoClusterOptions struct {
	// AdminNamespace holds the module's ConfigMap, the random ProviderConfig and the
	// ModuleClass; Namespaces may point portable classes at it (AppNamespace among them).
	AdminNamespace string
	// AppNamespace gets the portable KubernetesClusterClass, named Class.
	AppNamespace, Class string
	// BinDir holds etcd and kube-apiserver (default: BinDir()); StateDir is where each
	// cluster keeps its data (default: the module's).
	BinDir, StateDir string
	// Default labels the portable class the namespace's default.
	Default bool
}

// DemoClusterObjects are the objects that offer clusters of the demo cloud: the bundled
// module in a ConfigMap, a ProviderConfig for hashicorp/random, a ModuleClass
// "demo-kubecluster" that publishes the cluster's kubeconfig, endpoint and token as
// connection keys, and a portable KubernetesClusterClass pointing at it.
func DemoClusterObjects(o DemoClusterOptions) ([]client.Object, error) {
	files := map[string]string{}
	err := fs.WalkDir(tfmodules.FS, DemoClusterModule, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(tfmodules.FS, p)
		files[path.Base(p)] = string(b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read bundled module %s: %w", DemoClusterModule, err)
	}
	if o.BinDir == "" {
		o.BinDir = BinDir()
	}
	inputs := map[string]string{"bin_dir": o.BinDir}
	if o.StateDir != "" {
		inputs["state_dir"] = o.StateDir
	}
	raw, err := json.Marshal(inputs)
	if err != nil {
		return nil, fmt.Errorf("encode module inputs: %w", err)
	}
	const name = "demo-kubecluster"
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: o.AdminNamespace, Name: name + "-module"}, Data: files}
	random := &terraformv1.ProviderConfig{TypeMeta: typeMeta(terraformv1.GroupVersion.String(), "ProviderConfig"), ObjectMeta: metav1.ObjectMeta{Namespace: o.AdminNamespace, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}}
	mc := &terraformv1.ModuleClass{TypeMeta: typeMeta(terraformv1.GroupVersion.String(), "ModuleClass"), ObjectMeta: metav1.ObjectMeta{Namespace: o.AdminNamespace, Name: name},
		AllowedNamespaces: &common.AllowedNamespaces{Names: []string{o.AppNamespace}}}
	mc.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	mc.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}
	mc.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: random.Name}}
	mc.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: raw}
	mc.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "cluster_name"}}
	mc.SpecTemplate.Connection = []terraformv1.ConnectionMapping{
		{FromOutput: "kubeconfig", ToKey: "kubeconfig"}, {FromOutput: "endpoint", ToKey: "endpoint"}, {FromOutput: "token", ToKey: "token"}}
	class := &computev1.KubernetesClusterClass{TypeMeta: typeMeta(computev1.GroupVersion.String(), "KubernetesClusterClass"), ObjectMeta: metav1.ObjectMeta{Namespace: o.AppNamespace, Name: o.Class},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: name, Namespace: o.AdminNamespace}}
	if o.Default {
		class.Labels = map[string]string{common.DefaultClassLabel: "true"}
	}
	return []client.Object{cm, random, mc, class}, nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// ApplyObjects applies typed objects (their TypeMeta set) with server-side apply, as
// ApplyYAML applies manifests.
func ApplyObjects(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, obj := range objs {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("convert %s: %w", obj.GetName(), err)
		}
		u := &unstructured.Unstructured{Object: content}
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("terraplane-dev"), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// ShareClusterTools prepares dir for the demo cloud's clusters when terraform may run
// under other uids (runner processes): dir is made world-writable and sticky, as /tmp is
// (each cluster's own data directory is private to the uid that made it), and
// etcd and kube-apiserver are linked (or copied) into dir/bin, readable by every uid.
// It returns dir/bin.
func ShareClusterTools(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", fmt.Errorf("make %s: %w", bin, err)
	}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		return "", fmt.Errorf("open %s to runners: %w", dir, err)
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		src, err := Tool(name)
		if err != nil {
			return "", err
		}
		dst := filepath.Join(bin, name)
		if a, b := stat(src), stat(dst); a != nil && b != nil && os.SameFile(a, b) {
			continue
		}
		_ = os.Remove(dst)
		if err := os.Link(src, dst); err != nil {
			if err := copyFile(src, dst); err != nil {
				return "", fmt.Errorf("share %s: %w", name, err)
			}
		}
	}
	return bin, nil
}

func stat(p string) os.FileInfo {
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	return fi
}

// copyFile copies an executable.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
