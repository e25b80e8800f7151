package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
)

const chartDir = "../../charts/terraplane"

// everything turns on every optional part of the chart that needs no extra CRD.
var everything = []string{
	"--set", "workspaces.type=persistentVolumeClaim", "--set", "providers.pluginCache.type=persistentVolumeClaim",
	"--set", "providers.mirrorURL=https://mirror.example.internal/providers/", "--set", "providers.download=true",
	"--set", "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::123456789012:role/terraplane",
	"--set", "extraEnv[0].name=HTTPS_PROXY", "--set", "extraEnv[0].value=http://proxy.example.internal:3128",
	"--set", "envFrom[0].secretRef.name=terraplane-env", "--set", "concurrency.terraform=4", "--set", "driftInterval=30m",
	"--set", "moduleSourceAllow={https://git.example.internal/}", "--set", "replicas=2",
	"--set", "claimDefinitionGroups={platform.example.org}", "--set", "sharding.shards=12",
	"--set", "moduleRegistryURL=https://modules.example.internal/v1/modules/",
	"--set", "extraVolumes[0].name=private-ca", "--set", "extraVolumes[0].configMap.name=private-ca",
	"--set", "extraVolumeMounts[0].name=private-ca", "--set", "extraVolumeMounts[0].mountPath=/etc/ssl/private-ca",
	"--set", "topologySpreadConstraints[0].maxSkew=1", "--set", "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
	"--set", "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
}

// TestChart lints and renders the Helm chart, applies it with a server-side dry run and
// then for real into a namespace that enforces the restricted Pod Security level, and
// creates the Deployment's pod template there as a dry-run Pod, which must be admitted.
func TestChart(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	helm := tool(t, "helm", "make tools-test")

	By(t, "helm lint, with the defaults and with every option on")
	runTool(g, helm, "lint", "--strict", chartDir)
	runTool(g, helm, append([]string{"lint", "--strict", chartDir, "--set", "serviceMonitor.enabled=true"}, everything...)...)
	monitor := runTool(g, helm, "template", "t", chartDir, "--set", "serviceMonitor.enabled=true", "--set", "runners.mode=in-process")
	g.Expect(monitor).To(ContainSubstring("kind: ServiceMonitor"))
	g.Expect(monitor).NotTo(ContainSubstring("t-terraplane-runners"), "in-process: no runner to scrape")
	monitor = runTool(g, helm, "template", "t", chartDir, "--set", "serviceMonitor.enabled=true", "--set", "runners.mode=deployment",
		"--set", "tenancy.namespaces={team-a}")
	g.Expect(monitor).To(MatchRegexp(`(?s)name: t-terraplane-runners.*app.kubernetes.io/name: terraplane-runner.*matchNames:\s+- default\s+- team-a.*port: metrics`),
		"the runners' ServiceMonitor scrapes their Services where the controller serves")

	for _, tc := range []struct {
		ns   string
		args []string
	}{{"helm-defaults", nil}, {"helm-everything", everything}} {
		By(t, "helm template into "+tc.ns+", applied to the API server")
		restrictedNamespace(g, ctx, tc.ns)
		manifests := runTool(g, helm, append([]string{"template", "terraplane", chartDir, "-n", tc.ns, "--include-crds"}, tc.args...)...)
		applyManifests(g, manifests)
		admitPodTemplate(g, ctx, tc.ns, manifests)
		if tc.args != nil {
			g.Expect(manifests).To(ContainSubstring("--shards=12"), "sharding.shards reaches the controller")
			g.Expect(manifests).To(ContainSubstring("fieldPath: metadata.name"), "each replica is named by its pod")
			g.Expect(manifests).To(ContainSubstring("--module-registry-url=https://modules.example.internal/v1/modules/"), "moduleRegistryURL reaches the controller")
			g.Expect(manifests).To(ContainSubstring("kind: PodDisruptionBudget"), "two replicas get a PodDisruptionBudget, which the API server took")
		}
	}
}

// TestKustomize does the same for config/default (kubectl apply -k).
func TestKustomize(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	kubectl := tool(t, "kubectl", "make tools-test")
	manifests := runTool(g, kubectl, "kustomize", "../../config/default")
	g.Expect(manifests).To(ContainSubstring("pod-security.kubernetes.io/enforce: restricted"))
	// A server-side dry run cannot place objects in a namespace that does not exist yet.
	g.Expect(env.Namespace(ctx, "terraplane-system")).To(Succeed())
	applyManifests(g, manifests)
	admitPodTemplate(g, ctx, "terraplane-system", manifests)

	By(t, "the kustomize Deployment runs the pod the chart's defaults render, with terraform in-process (config/manager says so)")
	helm := tool(t, "helm", "make tools-test")
	chart := deployment(g, runTool(g, helm, "template", "terraplane", chartDir, "-n", "terraplane-system", "--set", "runners.mode=in-process"))
	kust := deployment(g, manifests)
	pc, kc := chart.Spec.Template.Spec, kust.Spec.Template.Spec
	g.Expect(kc.SecurityContext).To(Equal(pc.SecurityContext))
	g.Expect(kc.TerminationGracePeriodSeconds).To(Equal(pc.TerminationGracePeriodSeconds))
	g.Expect(pc.Hostname).To(BeEmpty(), "replicas have their own host names; state locks name the pod instead")
	g.Expect(kc.Hostname).To(Equal(pc.Hostname))
	g.Expect(kc.Volumes).To(Equal(pc.Volumes))
	c, k := pc.Containers[0], kc.Containers[0]
	for _, name := range []string{"POD_NAME", "POD_NAMESPACE", "POD_UID"} {
		want := envVar(c.Env, name)
		g.Expect(want).NotTo(BeNil(), "the chart gives the controller %s, which its state locks record", name)
		g.Expect(envVar(k.Env, name)).To(Equal(want), name)
	}
	g.Expect(k.Args).To(ConsistOf(c.Args))
	for _, field := range []string{"SecurityContext", "Resources", "VolumeMounts", "Ports", "LivenessProbe", "ReadinessProbe"} {
		g.Expect(k).To(HaveField(field, reflect.ValueOf(c).FieldByName(field).Interface()), field)
	}
}

// TestRestrictedRefusesPlainPod makes sure the admission check above can fail: a pod
// without the restricted settings is refused in such a namespace.
func TestRestrictedRefusesPlainPod(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	restrictedNamespace(g, ctx, "restricted-check")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "restricted-check", Name: "plain"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "terraplane:dev"}}}}
	err := env.Client.Create(ctx, pod, client.DryRunAll)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden by PodSecurity, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("restricted"))
}

// tool finds a cached tool or fails naming the make target that installs it.
func tool(t *testing.T, name, target string) string {
	t.Helper()
	p := filepath.Join(devenv.BinDir(), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed in %s: run `%s`", name, devenv.BinDir(), target)
	}
	return p
}

// runTool runs a tool (kubectl against the test API server) and returns its output.
func runTool(g Gomega, bin string, args ...string) string {
	return runToolOn(g, env.ControlPlane.Kubeconfig, bin, args...)
}

// runToolOn runs a tool (kubectl, helm) against the cluster of kubeconfig.
func runToolOn(g Gomega, kubeconfig, bin string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HELM_CACHE_HOME="+os.TempDir()+"/terraplane-helm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	g.Expect(err).NotTo(HaveOccurred(), "%s %s: %s", filepath.Base(bin), strings.Join(args, " "), stderr.String())
	return string(out)
}

func restrictedNamespace(g Gomega, ctx context.Context, name string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, ns))).To(Succeed())
}

// applyManifests applies with kubectl: a server-side dry run, then for real (so that the
// ServiceAccount the pod names exists).
func applyManifests(g Gomega, manifests string) {
	kubectl := filepath.Join(devenv.BinDir(), "kubectl")
	for _, dry := range []string{"--dry-run=server", "--dry-run=none"} {
		cmd := exec.Command(kubectl, "--kubeconfig", env.ControlPlane.Kubeconfig, "apply", "--server-side", "--force-conflicts",
			"--field-manager=install-test", dry, "-f", "-")
		cmd.Stdin = strings.NewReader(manifests)
		out, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "kubectl apply %s: %s", dry, out)
		g.Expect(string(out)).NotTo(ContainSubstring("Warning"), "kubectl apply %s", dry)
	}
}

// admitPodTemplate creates the Deployment's pod template as a dry-run Pod in ns.
func admitPodTemplate(g Gomega, ctx context.Context, ns, manifests string) {
	dep := deployment(g, manifests)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admission-check", Labels: dep.Spec.Template.Labels},
		Spec: dep.Spec.Template.Spec}
	g.Expect(env.Client.Create(ctx, pod, client.DryRunAll)).To(Succeed(), "the restricted Pod Security level admits the controller's pod")
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
	g.Expect(c.VolumeMounts).To(ContainElement(HaveField("MountPath", "/tmp")))
}

func deployment(g Gomega, manifests string) *appsv1.Deployment {
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		if u.GetKind() != "Deployment" {
			continue
		}
		dep := &appsv1.Deployment{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep)).To(Succeed())
		return dep
	}
	g.Expect(fmt.Errorf("no Deployment in the manifests")).NotTo(HaveOccurred())
	return nil
}

// envVar is the variable of env named name, or nil.
func envVar(env []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			return &env[i]
		}
	}
	return nil
}
