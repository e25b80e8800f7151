package install

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/yaml"

	"terraplane.io/terraplane/internal/runner"
)

// privateCA is the private-CA case of docs/install.md: a CA bundle from a ConfigMap,
// mounted read-only, that SSL_CERT_FILE points at.
const privateCA = `
extraVolumes:
  - name: private-ca
    configMap: {name: private-ca}
extraVolumeMounts:
  - name: private-ca
    mountPath: /etc/ssl/private-ca
    readOnly: true
extraEnv:
  - name: SSL_CERT_FILE
    value: /etc/ssl/private-ca/ca-certificates.crt
`

// controllerSelector selects the controller's pods, not the stack manager's.
var controllerSelector = &metav1.LabelSelector{
	MatchLabels:      map[string]string{"app.kubernetes.io/name": "terraplane", "app.kubernetes.io/instance": "terraplane"},
	MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app.kubernetes.io/component", Operator: metav1.LabelSelectorOpDoesNotExist}},
}

// TestChartValues renders the chart with each of the values a platform team adopts it
// with (extra volumes, a PodDisruptionBudget, topology spread, emptyDir size limits) and
// checks what each renders; values.schema.json refuses replicas > 1 without leader
// election and malformed new values, with helm lint and helm template alike.
func TestChartValues(t *testing.T) {
	g := NewWithT(t)
	helm := tool(t, "helm", "make tools-test")

	By(t, "defaults: emptyDir volumes with size limits, no PodDisruptionBudget, no spread")
	m := helmTemplate(g, helm, "")
	g.Expect(deployment(g, m).Spec.Selector).To(Equal(controllerSelector), "the controller's Deployment selects its own pods, not the stack manager's")
	spec := deployment(g, m).Spec.Template.Spec
	g.Expect(volume(spec, "workspaces").EmptyDir.SizeLimit).To(HaveValue(Equal(resource.MustParse("10Gi"))))
	g.Expect(volume(spec, "plugin-cache").EmptyDir.SizeLimit).To(HaveValue(Equal(resource.MustParse("5Gi"))))
	g.Expect(pdb(g, m)).To(BeNil())
	g.Expect(spec.TopologySpreadConstraints).To(BeEmpty())
	spec = deployment(g, helmTemplate(g, helm, "workspaces: {sizeLimit: ''}")).Spec.Template.Spec
	g.Expect(volume(spec, "workspaces").EmptyDir.SizeLimit).To(BeNil(), "an empty sizeLimit sets none")

	By(t, "extraVolumes and extraVolumeMounts: the private CA")
	spec = deployment(g, helmTemplate(g, helm, privateCA)).Spec.Template.Spec
	g.Expect(volume(spec, "private-ca").ConfigMap).To(HaveField("Name", "private-ca"))
	g.Expect(volume(spec, "workspaces")).NotTo(BeNil(), "the chart's own volumes stay")
	g.Expect(spec.Containers[0].VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "private-ca", MountPath: "/etc/ssl/private-ca", ReadOnly: true}))
	g.Expect(envVar(spec.Containers[0].Env, "SSL_CERT_FILE")).To(HaveField("Value", "/etc/ssl/private-ca/ca-certificates.crt"))

	By(t, "a PodDisruptionBudget with more than one replica, or when asked for")
	one := intstr.FromInt32(1)
	for values, want := range map[string]*intstr.IntOrString{
		"replicas: 2":                                                 &one,
		"podDisruptionBudget: {enabled: true}":                        &one,
		"{replicas: 3, podDisruptionBudget: {enabled: false}}":        nil,
		"{replicas: 3, podDisruptionBudget: {maxUnavailable: '50%'}}": ptrTo(intstr.FromString("50%")),
	} {
		got := pdb(g, helmTemplate(g, helm, values))
		if want == nil {
			g.Expect(got).To(BeNil(), values)
			continue
		}
		g.Expect(got).NotTo(BeNil(), values)
		g.Expect(got.Spec.MaxUnavailable).To(Equal(want), values)
		g.Expect(got.Spec.Selector).To(Equal(controllerSelector), values)
	}

	By(t, "topologySpreadConstraints: the controller's pods unless the constraint selects its own")
	spec = deployment(g, helmTemplate(g, helm, `topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
  - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {team: a}}}
`)).Spec.Template.Spec
	g.Expect(spec.TopologySpreadConstraints).To(Equal([]corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: controllerSelector},
		{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
	}))

	By(t, "values.schema.json refuses, for helm lint and helm template")
	for values, want := range map[string]string{
		"{replicas: 2, leaderElection: {enabled: false}}": "at '/leaderElection/enabled': value must be true",
		"workspaces: {sizeLimit: 10GB}":                   "at '/workspaces/sizeLimit'",
		"providers: {pluginCache: {sizeLimit: lots}}":     "at '/providers/pluginCache/sizeLimit'",
		"extraVolumeMounts: [{name: private-ca}]":         "missing property 'mountPath'",
		"extraVolumes: [{name: tmp, emptyDir: {}}]":       "at '/extraVolumes/0/name'",
		"topologySpreadConstraints: [{maxSkew: 1}]":       "missing properties 'topologyKey', 'whenUnsatisfiable'",
		"podDisruptionBudget: {minAvailable: 1}":          "additional properties 'minAvailable' not allowed",
		// misspelt keys, at the top and below: every level refuses what it does not know
		"runner: {mode: deployment}":           "additional properties 'runner' not allowed",
		"tenancy: {namespace: [demo]}":         "additional properties 'namespace' not allowed",
		"runners: {cpu: '1'}":                  "additional properties 'cpu' not allowed",
		"image: {pullpolicy: Always}":          "additional properties 'pullpolicy' not allowed",
		"metrics: {service: {prot: 8443}}":     "additional properties 'prot' not allowed",
		"runners: {resources: {limit: {}}}":    "additional properties 'limit' not allowed",
		"providers: {memoryBudget: 2GB}":       "at '/providers/memoryBudget'",
		"runners: {idleTTL: 15 minutes}":       "at '/runners/idleTTL'",
		"stackManager: {namespaces: [stacks]}": "additional properties 'namespaces' not allowed",
	} {
		for _, cmd := range []string{"lint", "template"} {
			out, err := helmWithValues(helm, cmd, values)
			g.Expect(err).To(HaveOccurred(), "helm %s accepts %s", cmd, values)
			g.Expect(out).To(ContainSubstring(want), "helm %s with %s", cmd, values)
		}
	}
	g.Expect(helmWithValues(helm, "lint", "{replicas: 1, leaderElection: {enabled: false}}")).Error().NotTo(HaveOccurred(),
		"one replica needs no leader election")
}

// TestChartRunnerValues: runner Deployments are the default, requesting little and
// scaling to zero when idle; in-process is chosen explicitly; runner pods take the
// controller's pod settings, each unless runners.* overrides it; providers.memoryBudget
// reaches the controller.
func TestChartRunnerValues(t *testing.T) {
	g := NewWithT(t)
	helm := tool(t, "helm", "make tools-test")

	By(t, "defaults: runner Deployments, 100m/256Mi requested under 1 CPU/2Gi, idle for 15m at most, 4 running per namespace at most")
	args := deployment(g, helmTemplate(g, helm, "")).Spec.Template.Spec.Containers[0].Args
	g.Expect(args).To(ContainElements("--runner=deployment", "--runner-image=terraplane:0.1.0", "--runner-idle-ttl=15m", "--runner-max-pools-per-namespace=4"))
	g.Expect(deployment(g, helmTemplate(g, helm, "runners: {maxPoolsPerNamespace: -1}")).Spec.Template.Spec.Containers[0].Args).
		To(ContainElement("--runner-max-pools-per-namespace=-1"), "no cap")
	pod := runnerPod(g, args)
	g.Expect(pod.Resources).To(HaveValue(Equal(corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}})))
	g.Expect(pod.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent), "the controller's pull policy")
	g.Expect(args).NotTo(ContainElement(HavePrefix("--provider-memory-budget")), "by default, half of each pod's memory limit")
	in := deployment(g, helmTemplate(g, helm, "runners: {mode: in-process}")).Spec.Template.Spec.Containers[0].Args
	g.Expect(in).NotTo(ContainElement(HavePrefix("--runner")), "in-process: terraform in the controller")

	By(t, "runner pods take the controller's pod settings")
	inherited := privateCA + `
imagePullSecrets: [{name: registry}]
image: {pullPolicy: Always}
nodeSelector: {pool: platform}
tolerations: [{key: dedicated, operator: Equal, value: platform, effect: NoSchedule}]
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}
priorityClassName: platform
providers: {memoryBudget: 1Gi}
`
	spec := deployment(g, helmTemplate(g, helm, inherited)).Spec.Template.Spec
	pod = runnerPod(g, spec.Containers[0].Args)
	g.Expect(pod.ImagePullSecrets).To(Equal(spec.ImagePullSecrets))
	g.Expect(pod.ImagePullPolicy).To(Equal(corev1.PullAlways))
	g.Expect(pod.Volumes).To(ConsistOf(*volume(spec, "private-ca")))
	g.Expect(pod.VolumeMounts).To(ConsistOf(corev1.VolumeMount{Name: "private-ca", MountPath: "/etc/ssl/private-ca", ReadOnly: true}))
	g.Expect(pod.Env).To(ConsistOf(*envVar(spec.Containers[0].Env, "SSL_CERT_FILE")))
	g.Expect(pod.NodeSelector).To(Equal(spec.NodeSelector))
	g.Expect(pod.Tolerations).To(Equal(spec.Tolerations))
	g.Expect(pod.Affinity).To(Equal(spec.Affinity))
	g.Expect(pod.PriorityClassName).To(Equal("platform"))
	g.Expect(spec.Containers[0].Args).To(ContainElement("--provider-memory-budget=1Gi"))

	By(t, "runners.* overrides each, and an empty one sets none")
	pod = runnerPod(g, deployment(g, helmTemplate(g, helm, inherited+`
runners:
  imagePullSecrets: [{name: runner-registry}]
  pullPolicy: IfNotPresent
  extraEnv: []
  extraVolumes: []
  extraVolumeMounts: []
  nodeSelector: {pool: runners}
  tolerations: []
  affinity: {}
  priorityClassName: runners
  resources: {limits: {memory: 1Gi}}
`)).Spec.Template.Spec.Containers[0].Args)
	g.Expect(pod).To(Equal(runner.PodSettings{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "runner-registry"}},
		ImagePullPolicy: corev1.PullIfNotPresent, NodeSelector: map[string]string{"pool": "runners"}, PriorityClassName: "runners",
		Resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}))
}

// runnerPod reads the runner pod settings the chart passes the controller (--runner-pod).
func runnerPod(g Gomega, args []string) runner.PodSettings {
	var raw string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--runner-pod="); ok {
			raw = v
		}
	}
	g.Expect(raw).NotTo(BeEmpty(), "--runner-pod in %v", args)
	var s runner.PodSettings
	g.Expect(json.Unmarshal([]byte(raw), &s)).To(Succeed(), raw)
	return s
}

// helmTemplate renders the chart as the release terraplane with values (YAML).
func helmTemplate(g Gomega, helm, values string) string {
	out, err := helmWithValues(helm, "template", values)
	g.Expect(err).NotTo(HaveOccurred(), out)
	return out
}

// helmWithValues runs helm lint --strict or helm template on the chart with values
// (YAML) and returns its combined output.
func helmWithValues(helm, cmd, values string) (string, error) {
	f, err := os.CreateTemp("", "values-*.yaml")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(values); err != nil {
		return "", err
	}
	f.Close()
	args := []string{"lint", "--strict", chartDir, "-f", f.Name()}
	if cmd == "template" {
		args = []string{"template", "terraplane", chartDir, "-f", f.Name()}
	}
	c := exec.Command(helm, args...)
	c.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(os.TempDir(), "terraplane-helm"))
	out, err := c.CombinedOutput()
	return string(out), err
}

// volume is the pod's volume named name, or nil.
func volume(spec corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

// pdb is the PodDisruptionBudget among the manifests, or nil.
func pdb(g Gomega, manifests string) *policyv1.PodDisruptionBudget {
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return nil
		}
		g.Expect(err).NotTo(HaveOccurred())
		if u.GetKind() == "PodDisruptionBudget" {
			p := &policyv1.PodDisruptionBudget{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p)).To(Succeed())
			return p
		}
	}
}
