package runner

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// RunnerPort is the port a runner Deployment serves its runs on, over TLS.
const RunnerPort = 8443

// MetricsPort is the port a runner Deployment serves its metrics on (GET /metrics, plain
// HTTP): its terraform processes and warm providers, no secret.
const MetricsPort = 8080

// metricsAnnotations let a Prometheus that discovers pods by annotation scrape a runner.
var metricsAnnotations = map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(MetricsPort),
	"prometheus.io/path": "/metrics"}

// Where a runner pod keeps what it is given and what it makes.
const (
	credentialsDir = "/etc/terraplane-runner"
	workDir        = "/var/lib/terraplane/runner"
)

// PodSpec is what every runner pod runs: the controller's image, with its terraform and
// provider mirror, and the runner's resources and flags.
type PodSpec struct {
	// Image is the terraplane image (the controller's).
	Image string
	// Terraform and PluginMirror are paths in the image.
	Terraform, PluginMirror string
	// Resources are each runner's; its warm providers count in its memory.
	Resources corev1.ResourceRequirements
	// Args are more flags for every runner (provider reuse, concurrency, ...).
	Args []string
	// Settings are the pod settings runners share with the controller (or override):
	// pull secrets, pull policy, environment, volumes, scheduling.
	Settings PodSettings
}

// PodSettings are the pod settings a runner pod takes from the install: by default the
// controller's own (the chart's imagePullSecrets, image.pullPolicy, extraEnv,
// extraVolumes and extraVolumeMounts, nodeSelector, tolerations, affinity,
// priorityClassName), or the runners' overrides. What they name (pull secrets, a CA
// bundle's ConfigMap) must exist in each pool's namespace.
type PodSettings struct {
	// ImagePullSecrets name Secrets in the pool's namespace to pull the image with.
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// ImagePullPolicy is the runner container's pull policy.
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// Env is more environment for the runner container (proxies, SSL_CERT_FILE).
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Volumes are more volumes of the pod, and VolumeMounts their mounts in the runner
	// container (a private CA bundle).
	Volumes      []corev1.Volume      `json:"volumes,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// NodeSelector, Tolerations, Affinity and PriorityClassName place the pod.
	NodeSelector      map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations       []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity          *corev1.Affinity    `json:"affinity,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
	// Resources, when set, are the runner container's (else PodSpec.Resources).
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// serviceHost is the DNS name of pool's runner Service.
func serviceHost(pool PoolRef) string {
	return ServiceAccountName(pool) + "." + pool.Namespace + ".svc"
}

// certHosts are the names pool's runner certificate is valid for.
func certHosts(pool PoolRef) []string {
	return []string{serviceHost(pool), serviceHost(pool) + ".cluster.local"}
}

// setService makes svc pool's runner Service: its port, to the runner's pods.
func setService(svc *corev1.Service, pool PoolRef) {
	svc.Labels = maps.Clone(poolLabels(pool))
	svc.Spec.Selector = poolLabels(pool)
	svc.Spec.Ports = []corev1.ServicePort{{Name: "runs", Port: RunnerPort, TargetPort: intstr.FromInt32(RunnerPort), Protocol: corev1.ProtocolTCP},
		{Name: "metrics", Port: MetricsPort, TargetPort: intstr.FromInt32(MetricsPort), Protocol: corev1.ProtocolTCP}}
}

// setDeployment makes dep pool's runner Deployment: one replica (its warm providers are
// its own), replaced rather than rolled (two runners of a pool would only share its
// locks), meeting the restricted Pod Security level. credentials is a digest of the
// runner's certificate: a new one restarts the runner.
func setDeployment(dep *appsv1.Deployment, pool PoolRef, spec PodSpec, credentials string) {
	labels := poolLabels(pool)
	dep.Labels = maps.Clone(labels)
	dep.Spec.Replicas = ptr.To(int32(1))
	dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	dep.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	dep.Spec.Template = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels), Annotations: podAnnotations(credentials)},
		Spec:       podSpec(pool, spec),
	}
}

// podAnnotations are a runner pod's: the digest of its credentials, and where its
// metrics are.
func podAnnotations(credentials string) map[string]string {
	out := maps.Clone(metricsAnnotations)
	out["terraplane.io/runner-credentials"] = credentials
	return out
}

// podSpec is the runner pod of pool.
func podSpec(pool PoolRef, spec PodSpec) corev1.PodSpec {
	args := append([]string{"runner", "--pool", pool.String(), "--listen", ":" + strconv.Itoa(RunnerPort),
		"--tls-cert-file", credentialsDir + "/" + CertKey, "--tls-key-file", credentialsDir + "/" + KeyKey,
		"--token-file", credentialsDir + "/" + TokenKey, "--workdir", workDir + "/work",
		"--metrics-bind-address", ":" + strconv.Itoa(MetricsPort)}, podPaths(spec)...)
	set := spec.Settings
	res := spec.Resources
	if set.Resources != nil {
		res = *set.Resources
	}
	return corev1.PodSpec{
		ServiceAccountName: ServiceAccountName(pool),
		ImagePullSecrets:   set.ImagePullSecrets,
		NodeSelector:       set.NodeSelector,
		Tolerations:        set.Tolerations,
		Affinity:           set.Affinity,
		PriorityClassName:  set.PriorityClassName,
		// terraform gets SIGINT and 30 s to write its state; give it time
		TerminationGracePeriodSeconds: ptr.To(int64(60)),
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(65532)), RunAsGroup: ptr.To(int64(65532)),
			FSGroup: ptr.To(int64(65532)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{
			Name: "runner", Image: spec.Image, ImagePullPolicy: set.ImagePullPolicy, Args: append(args, runnerFlags(spec.Args, res)...),
			Env: append([]corev1.EnvVar{{Name: "HOME", Value: "/tmp"}, {Name: "TMPDIR", Value: "/tmp"},
				{Name: "KUBE_IN_CLUSTER_CONFIG", Value: "true"}, {Name: "CHECKPOINT_DISABLE", Value: "1"}}, set.Env...),
			Ports:          []corev1.ContainerPort{{Name: "runs", ContainerPort: RunnerPort}, {Name: "metrics", ContainerPort: MetricsPort}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(RunnerPort)}}, PeriodSeconds: 5},
			Resources:      res,
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			VolumeMounts: append([]corev1.VolumeMount{{Name: "credentials", MountPath: credentialsDir, ReadOnly: true},
				{Name: "work", MountPath: workDir}, {Name: "tmp", MountPath: "/tmp"}}, set.VolumeMounts...),
		}},
		Volumes: append([]corev1.Volume{
			{Name: "credentials", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ServiceAccountName(pool), DefaultMode: ptr.To(int32(0o400))}}},
			{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}, set.Volumes...),
	}
}

// budgetFlag is the runner flag capping its warm providers' memory.
const budgetFlag = "--provider-memory-budget"

// runnerFlags are args, with a provider memory budget of half the pod's memory limit
// when args set none: warm providers are stopped, idle ones first, before the pod is
// killed for its memory.
func runnerFlags(args []string, res corev1.ResourceRequirements) []string {
	limit := res.Limits.Memory()
	if limit.IsZero() || slices.ContainsFunc(args, func(a string) bool { return a == budgetFlag || strings.HasPrefix(a, budgetFlag+"=") }) {
		return args
	}
	return append(slices.Clone(args), budgetFlag, strconv.FormatInt(limit.Value()/2, 10))
}

// podPaths are the flags naming terraform and the provider mirror in the image.
func podPaths(spec PodSpec) []string {
	var out []string
	if spec.Terraform != "" {
		out = append(out, "--terraform", spec.Terraform)
	}
	if spec.PluginMirror != "" {
		out = append(out, "--plugin-mirror", spec.PluginMirror)
	}
	return out
}
