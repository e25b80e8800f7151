package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// devPlane is one run of `terraplane dev` inside the test.
type devPlane struct {
	cancel context.CancelFunc
	done   chan error
}

func startDev(o devOptions) *devPlane {
	ctx, cancel := context.WithCancel(context.Background())
	p := &devPlane{cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- runDev(ctx, o) }()
	return p
}

// stop stops the plane the way Ctrl-C does, and waits for it.
func (p *devPlane) stop(g Gomega) {
	p.cancel()
	select {
	case err := <-p.done:
		g.Expect(err).NotTo(HaveOccurred())
	case <-time.After(3 * time.Minute):
		g.Expect(fmt.Errorf("terraplane dev did not stop")).NotTo(HaveOccurred())
	}
}

// devClient reads the plane's kubeconfig once it is written.
func devClient(g Gomega, kubeconfig string) client.Client {
	var c client.Client
	g.Eventually(func(g Gomega) {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		g.Expect(err).NotTo(HaveOccurred())
		c, err = client.New(cfg, client.Options{Scheme: kinds.NewScheme()})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.List(context.Background(), &storagev1.BucketList{})).To(Succeed())
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return c
}

// quickstartReady waits for the quickstart Bucket to be Bound and Ready and returns it
// with its managed S3Bucket.
func quickstartReady(g Gomega, c client.Client) (*storagev1.Bucket, *awsstoragev1.S3Bucket) {
	ctx := context.Background()
	b := &storagev1.Bucket{}
	mg := &awsstoragev1.S3Bucket{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "quickstart"}, b)).To(Succeed())
		g.Expect(b.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
		g.Expect(resource.IsReady(b.Status.Conditions)).To(BeTrue(), "%+v", b.Status.Conditions)
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: b.Spec.ResourceRef.Namespace, Name: b.Spec.ResourceRef.Name}, mg)).To(Succeed())
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return b, mg
}

// buckets lists the buckets of the quickstart's S3 endpoint (moto_server) through the S3 API.
func buckets(g Gomega, port int) []string {
	mc, err := minio.New(fmt.Sprintf("127.0.0.1:%d", port), &minio.Options{Creds: credentials.NewStaticV4("terraplane", "terraplane-secret", "")})
	g.Expect(err).NotTo(HaveOccurred())
	list, err := mc.ListBuckets(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, b := range list {
		names = append(names, b.Name)
	}
	return names
}

// TestDevKeepsItsData runs `terraplane dev --quickstart` on a non-default S3 port, stops
// it and starts it again on the same state directory: the quickstart Provider points at
// that port, and the second run finds the claim, its resource, its Terraform state and
// its bucket (moto_server replays what it recorded) where the first left them, plans
// against the emulator and makes no second bucket.
func TestDevKeepsItsData(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane, moto_server and terraform with the aws provider")
	}
	g := NewWithT(t)
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	state := t.TempDir()
	o := devOptions{
		Options: app.Options{
			WorkDir: filepath.Join(state, "workspaces"), Engine: engine.Options{PluginMirror: devenv.PluginMirror()},
			DriftInterval: 10 * time.Minute, UserErrorRetry: 2 * time.Second,
		},
		kubeconfigOut: filepath.Join(state, "kubeconfig"),
		quickstart:    "../../examples/quickstart",
		s3Port:        port,
		stateDir:      state,
	}
	ctx := context.Background()

	t.Log("first run: the quickstart Bucket on the S3 emulator at the port given")
	first := startDev(o)
	c := devClient(g, o.kubeconfigOut)
	claim, mg := quickstartReady(g, c)
	provider := &awsv1.Provider{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "terraplane-system", Name: "local-s3"}, provider)).To(Succeed())
	g.Expect(provider.Spec.Endpoint).To(Equal(fmt.Sprintf("http://127.0.0.1:%d", port)))
	g.Expect(buckets(g, port)).To(ConsistOf(mg.Spec.ForProvider.BucketName))
	applied := mg.Status.Terraform.LastApplyTime
	g.Expect(applied).NotTo(BeNil())
	first.stop(g)

	t.Log("second run on the same state directory, planning soon after it starts")
	o.DriftInterval = 5 * time.Second
	if last := mg.Status.Terraform.LastPlanTime; last != nil {
		time.Sleep(time.Until(last.Add(o.DriftInterval))) // so the first look after the restart plans
	}
	second := startDev(o)
	defer second.stop(g)
	c = devClient(g, o.kubeconfigOut)
	again, mgAgain := quickstartReady(g, c)
	g.Expect(again.UID).To(Equal(claim.UID), "the same claim, not a new one")
	g.Expect(mgAgain.UID).To(Equal(mg.UID))
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: mg.Namespace, Name: resource.StateSecretName(mg)}, &corev1.Secret{})).To(Succeed(), "the Terraform state is kept")
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(mgAgain), mgAgain)).To(Succeed())
		g.Expect(mgAgain.Status.Terraform.LastPlanTime).NotTo(BeNil())
		g.Expect(mgAgain.Status.Terraform.LastPlanTime.After(applied.Time)).To(BeTrue(), "a plan ran against the emulator after the restart")
		g.Expect(syncedNow(mgAgain)).To(BeTrue())
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	g.Expect(mgAgain.Status.Terraform.LastApplyTime).To(Equal(applied), "nothing to apply")
	g.Expect(buckets(g, port)).To(ConsistOf(mg.Spec.ForProvider.BucketName), "no second bucket")
}

// syncedNow reports whether mg is Synced for its current generation.
func syncedNow(mg *awsstoragev1.S3Bucket) bool {
	for _, c := range mg.Status.Conditions {
		if c.Type == common.TypeSynced {
			return c.Status == metav1.ConditionTrue && c.ObservedGeneration == mg.Generation
		}
	}
	return false
}

// TestDevEphemeral checks where `terraplane dev` keeps etcd's data for its flags: under
// --state-dir by default, nowhere that outlives the run with --ephemeral (the control
// plane then uses a directory it removes on stop: devenv's
// TestEphemeralControlPlaneKeepsNothing).
func TestDevEphemeral(t *testing.T) {
	for _, tc := range []struct {
		name          string
		args          []string
		wantEtcd      string
		wantEphemeral bool
	}{
		{"default", nil, filepath.Join(".terraplane", "etcd"), false},
		{"state dir", []string{"--state-dir", "/var/tp"}, "/var/tp/etcd", false},
		{"ephemeral", []string{"--ephemeral"}, "", true},
		{"ephemeral ignores the state dir", []string{"--ephemeral", "--state-dir", "/var/tp"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &devOptions{}
			cmd := newDevCommand(o)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			got := struct {
				Etcd      string
				Ephemeral bool
			}{o.etcdDir(), o.ephemeral}
			want := struct {
				Etcd      string
				Ephemeral bool
			}{tc.wantEtcd, tc.wantEphemeral}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("dev %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestDevDirs: workspaces go under --state-dir unless --workdir says otherwise; with
// --ephemeral, the state directory (workspaces and MinIO's data) is a temporary one
// that is gone once the plane stops. --workdir's help names dev's own default.
func TestDevDirs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		wantWork  string // "" for under the temporary directory
		ephemeral bool
	}{
		{"default", []string{"--state-dir", "/var/tp"}, "/var/tp/workspaces", false},
		{"workdir given", []string{"--state-dir", "/var/tp", "--workdir", "/scratch"}, "/scratch", false},
		{"ephemeral", []string{"--ephemeral", "--state-dir", "/var/tp"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &devOptions{}
			cmd := newDevCommand(o)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			o.workdirSet = cmd.Flags().Changed("workdir")
			cleanup, err := o.useDirs()
			if err != nil {
				t.Fatal(err)
			}
			if !tc.ephemeral {
				cleanup()
				if o.WorkDir != tc.wantWork {
					t.Errorf("workdir %s, want %s", o.WorkDir, tc.wantWork)
				}
				return
			}
			if o.stateDir == "/var/tp" || o.WorkDir != filepath.Join(o.stateDir, "workspaces") {
				t.Fatalf("ephemeral: state dir %s, workdir %s", o.stateDir, o.WorkDir)
			}
			g := NewWithT(t)
			g.Expect(os.MkdirAll(filepath.Join(o.stateDir, "minio", "data"), 0o755)).To(Succeed())
			g.Expect(os.MkdirAll(o.WorkDir, 0o755)).To(Succeed())
			cleanup()
			_, err = os.Stat(o.stateDir)
			g.Expect(os.IsNotExist(err)).To(BeTrue(), "the temporary state directory is left behind")
		})
	}
	if f := newDevCommand(&devOptions{}).Flags().Lookup("workdir"); f.DefValue != "<state-dir>/workspaces" {
		t.Errorf("--workdir's default reads %q", f.DefValue)
	}
}

// TestDevHelp: without the quickstart, dev points at nothing the quickstart would make.
func TestDevHelp(t *testing.T) {
	var without, with bytes.Buffer
	printHelp(&without, devOptions{kubeconfigOut: "kc"}, fleet{})
	printHelp(&with, devOptions{kubeconfigOut: "kc", quickstart: "examples/quickstart"}, fleet{})
	if strings.Contains(without.String(), "quickstart-bucket") || strings.Contains(without.String(), "bucket -n demo") {
		t.Errorf("without --quickstart the help names the quickstart's bucket:\n%s", without.String())
	}
	if !strings.Contains(with.String(), "describe bucket -n demo quickstart") {
		t.Errorf("with --quickstart the help does not name its bucket:\n%s", with.String())
	}
}

// TestDevRunner: dev runs terraform in a runner process per pool when it runs as root
// (each pool under a uid of its own), in its own process otherwise; --runner wins.
func TestDevRunner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		euid  int
		want  string
		notes string
	}{
		{"root", nil, 0, app.RunnerProcess, "each under a uid of its own"},
		{"a user", nil, 1000, app.RunnerInProcess, "run as root for a runner process per pool"},
		{"root, in-process asked for", []string{"--runner", "in-process"}, 0, app.RunnerInProcess, "the controllers' identity"},
		{"a user, process asked for", []string{"--runner", "process", "--runner-insecure-shared-uid"}, 1000, app.RunnerProcess, "WARNING: terraform runs in a runner process per pool, all as uid 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &devOptions{}
			cmd := newDevCommand(o)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			got := devRunner(o.Runner, cmd.Flags().Changed("runner"), tc.euid)
			if got != tc.want {
				t.Errorf("runner %q, want %q", got, tc.want)
			}
			if note := runnerNote(got, o.RunnerInsecureSharedUID, tc.euid); !strings.Contains(note, tc.notes) {
				t.Errorf("dev says %q; want it to say %q", note, tc.notes)
			}
		})
	}
	if f := newDevCommand(&devOptions{}).Flags().Lookup("runner"); f.DefValue != "process as root, in-process otherwise" {
		t.Errorf("--runner's default reads %q", f.DefValue)
	}
}

// TestDevStartTimeout: dev gives etcd and kube-apiserver minutes to start (envtest's
// default is 20s, too short on a busy machine), and a start that runs out of time says
// which flag gives it longer.
func TestDevStartTimeout(t *testing.T) {
	o := &devOptions{}
	if err := newDevCommand(o).ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if o.startTimeout < 2*time.Minute {
		t.Errorf("--start-timeout defaults to %s; want minutes", o.startTimeout)
	}
	_, err := startControlPlane(devOptions{kubeconfigOut: filepath.Join(t.TempDir(), "kubeconfig"), ephemeral: true, startTimeout: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "give them longer with --start-timeout (it was 1ms)") {
		t.Errorf("a control plane that did not start in 1ms: %v; want the flag named", err)
	}
}
