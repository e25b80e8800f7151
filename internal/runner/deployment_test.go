package runner

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"terraplane.io/terraplane/internal/engine"
)

// TestRunnerDeployment: a pool's runner is one replica, replaced not rolled, of a pod
// that meets the restricted Pod Security level, runs as the pool's ServiceAccount, serves
// over TLS with the credentials Secret mounted read-only for its uid, reaches its cluster
// in-cluster, is what the pool's Service selects, and serves its metrics on a port the
// Service and the pod's scrape annotations name.
func TestRunnerDeployment(t *testing.T) {
	pool := PoolRef{Namespace: "team-a", Name: "blue"}
	spec := PodSpec{Image: "registry.example.com/terraplane:v1", Terraform: "/usr/local/bin/terraform", PluginMirror: "/cache/providers",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		Args:      []string{"--provider-reuse=true"}}
	dep := &appsv1.Deployment{}
	setDeployment(dep, pool, spec, "c0ffee")
	svc := &corev1.Service{}
	setService(svc, pool)
	p := dep.Spec.Template.Spec
	c := p.Containers[0]
	sc, psc := c.SecurityContext, p.SecurityContext
	got := map[string]any{
		"replicas": *dep.Spec.Replicas, "strategy": string(dep.Spec.Strategy.Type), "account": p.ServiceAccountName, "image": c.Image,
		"restricted": *psc.RunAsNonRoot && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault && !*sc.AllowPrivilegeEscalation &&
			*sc.ReadOnlyRootFilesystem && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}),
		"args":        c.Args,
		"credentials": *p.Volumes[0].Secret.DefaultMode == 0o400 && p.Volumes[0].Secret.SecretName == "terraplane-runner-blue" && c.VolumeMounts[0].ReadOnly,
		"in-cluster":  slices.Contains(c.Env, corev1.EnvVar{Name: "KUBE_IN_CLUSTER_CONFIG", Value: "true"}),
		"memory":      c.Resources.Limits.Memory().String(),
		"selected":    cmp.Equal(svc.Spec.Selector, dep.Spec.Template.Labels) && cmp.Equal(dep.Spec.Selector.MatchLabels, svc.Spec.Selector),
		"port":        svc.Spec.Ports[0].Port,
		"metrics": []any{svc.Spec.Ports[1].Name, svc.Spec.Ports[1].Port, c.Ports[1].Name, c.Ports[1].ContainerPort,
			dep.Spec.Template.Annotations["prometheus.io/scrape"], dep.Spec.Template.Annotations["prometheus.io/port"]},
		"restarts with": dep.Spec.Template.Annotations["terraplane.io/runner-credentials"],
	}
	want := map[string]any{
		"replicas": int32(1), "strategy": "Recreate", "account": "terraplane-runner-blue", "image": spec.Image, "restricted": true,
		"args": []string{"runner", "--pool", "team-a/blue", "--listen", ":8443", "--tls-cert-file", "/etc/terraplane-runner/tls.crt",
			"--tls-key-file", "/etc/terraplane-runner/tls.key", "--token-file", "/etc/terraplane-runner/token", "--workdir", "/var/lib/terraplane/runner/work",
			"--metrics-bind-address", ":8080", "--terraform", "/usr/local/bin/terraform", "--plugin-mirror", "/cache/providers", "--provider-reuse=true",
			"--provider-memory-budget", "536870912"}, // half the memory limit
		"credentials": true, "in-cluster": true, "memory": "1Gi", "selected": true, "port": int32(RunnerPort), "restarts with": "c0ffee",
		"metrics": []any{"metrics", int32(8080), "metrics", int32(8080), "true", "8080"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runner objects (-want +got):\n%s", diff)
	}
}

// TestCredentials: a runner's credentials hold a token and a certificate for its
// Service's names; they are made again when missing a part, for other names, or about
// to expire.
func TestCredentials(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	hosts := certHosts(PoolRef{Namespace: "team-a", Name: "default"})
	data, err := NewCredentials(hosts, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(data[TokenKey]) != 64 {
		t.Errorf("token of %d characters, want 64 (32 random bytes)", len(data[TokenKey]))
	}
	without := func(key string) map[string][]byte {
		d := map[string][]byte{}
		for k, v := range data {
			if k != key {
				d[k] = v
			}
		}
		return d
	}
	cases := map[string]struct {
		data   map[string][]byte
		hosts  []string
		at     time.Time
		usable bool
	}{
		"fresh":                 {data, hosts, now, true},
		"a year on":             {data, hosts, now.Add(365 * 24 * time.Hour), true},
		"about to expire":       {data, hosts, now.Add(certLifetime - certRenewal/2), false},
		"for another pool":      {data, certHosts(PoolRef{Namespace: "team-b", Name: "default"}), now, false},
		"no token":              {without(TokenKey), hosts, now, false},
		"no key":                {without(KeyKey), hosts, now, false},
		"no certificate":        {without(CertKey), hosts, now, false},
		"a certificate of junk": {map[string][]byte{TokenKey: []byte("t"), KeyKey: []byte("k"), CertKey: []byte("junk")}, hosts, now, false},
	}
	for name, tc := range cases {
		if got := usable(tc.data, tc.hosts, tc.at); got != tc.usable {
			t.Errorf("%s: usable %v, want %v", name, got, tc.usable)
		}
	}
}

// TestTLSClient: over TLS, a client that pins the runner's certificate runs workspaces
// with its token; a wrong token is refused; a server with another certificate is not
// trusted, and counts as unreachable.
func TestTLSClient(t *testing.T) {
	hosts := []string{"localhost"} // the test server listens on loopback
	data, err := NewCredentials(hosts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCredentials(hosts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(data[CertKey], data[KeyKey])
	if err != nil {
		t.Fatal(err)
	}
	runs := &fakeRuns{}
	srv := &Server{Runs: runs, Token: string(data[TokenKey])}
	runs.srv = srv
	ts := httptest.NewUnstartedServer(srv)
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	ts.StartTLS()
	defer ts.Close()
	url := strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)
	cases := map[string]struct {
		pin         []byte
		token       string
		ok          bool
		unreachable bool
	}{
		"the runner's certificate and token": {data[CertKey], string(data[TokenKey]), true, false},
		"a wrong token":                      {data[CertKey], "guess", false, false},
		"another certificate pinned":         {other[CertKey], string(data[TokenKey]), false, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := NewTLSClient(url, tc.pin, tc.token, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.Outputs(context.Background(), engine.Workspace{ID: "w"})
			if (err == nil) != tc.ok || unreachable(err) != tc.unreachable {
				t.Fatalf("Outputs = %v, %v; want ok %v, unreachable %v", out, err, tc.ok, tc.unreachable)
			}
			if tc.ok && string(out["o"].Value) != "1" {
				t.Errorf("outputs %v", out)
			}
		})
	}
	if _, err := NewTLSClient(url, []byte("junk"), "t", nil); err == nil {
		t.Error("a certificate that is no PEM was accepted")
	}
	// dialled at its IP (a cluster without cluster DNS), the runner is trusted only when
	// checked for the name its certificate holds
	byIP, err := NewTLSClient(ts.URL, data[CertKey], string(data[TokenKey]), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := byIP.Outputs(context.Background(), engine.Workspace{ID: "w"}); err == nil {
		t.Error("a runner dialled at its IP was trusted without a name to check")
	}
	byIP.verifyAs("localhost")
	if _, err := byIP.Outputs(context.Background(), engine.Workspace{ID: "w"}); err != nil {
		t.Errorf("a runner dialled at its IP, checked for its name: %v", err)
	}
}

// TestRunnerPodSettings: a runner pod takes the install's pod settings (pull secrets and
// policy, environment after its own, volumes and mounts after its own, scheduling) and
// their resources over the PodSpec's; without a memory budget among its flags it gets
// half its memory limit, and keeps one it was given.
func TestRunnerPodSettings(t *testing.T) {
	pool := PoolRef{Namespace: "team-a", Name: "blue"}
	ca := corev1.Volume{Name: "private-ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "private-ca"}}}}
	mount := corev1.VolumeMount{Name: "private-ca", MountPath: "/etc/ssl/private-ca", ReadOnly: true}
	env := corev1.EnvVar{Name: "SSL_CERT_FILE", Value: "/etc/ssl/private-ca/ca.crt"}
	tol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "terraform", Effect: corev1.TaintEffectNoSchedule}
	aff := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}
	spec := PodSpec{Image: "registry.example.com/terraplane:v1", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}},
		Args: []string{"--provider-reuse=true"}, Settings: PodSettings{
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}, ImagePullPolicy: corev1.PullAlways, Env: []corev1.EnvVar{env},
			Volumes: []corev1.Volume{ca}, VolumeMounts: []corev1.VolumeMount{mount}, NodeSelector: map[string]string{"pool": "terraform"},
			Tolerations: []corev1.Toleration{tol}, Affinity: aff, PriorityClassName: "platform", Resources: &res}}
	p := podSpec(pool, spec)
	c := p.Containers[0]
	got := map[string]any{"pull secrets": p.ImagePullSecrets, "pull policy": c.ImagePullPolicy, "env": c.Env[len(c.Env)-1],
		"own env first": c.Env[0].Name, "volume": p.Volumes[len(p.Volumes)-1], "own volumes first": p.Volumes[0].Name,
		"mount": c.VolumeMounts[len(c.VolumeMounts)-1], "node selector": p.NodeSelector, "tolerations": p.Tolerations, "affinity": p.Affinity,
		"priority class": p.PriorityClassName, "resources": c.Resources, "budget": c.Args[len(c.Args)-2:]}
	want := map[string]any{"pull secrets": []corev1.LocalObjectReference{{Name: "registry"}}, "pull policy": corev1.PullAlways, "env": env,
		"own env first": "HOME", "volume": ca, "own volumes first": "credentials", "mount": mount, "node selector": map[string]string{"pool": "terraform"},
		"tolerations": []corev1.Toleration{tol}, "affinity": aff, "priority class": "platform", "resources": res,
		"budget": []string{"--provider-memory-budget", "536870912"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runner pod (-want +got):\n%s", diff)
	}
	spec.Args = []string{"--provider-memory-budget=300Mi"}
	if args := podSpec(pool, spec).Containers[0].Args; slices.Contains(args, "536870912") || !slices.Contains(args, "--provider-memory-budget=300Mi") {
		t.Errorf("a budget given was replaced: %v", args)
	}
	spec.Settings = PodSettings{}
	spec.Resources = corev1.ResourceRequirements{}
	if args := podSpec(pool, spec).Containers[0].Args; slices.Contains(args, budgetFlag) {
		t.Errorf("a budget without a memory limit: %v", args)
	}
}
