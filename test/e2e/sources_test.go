package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	. "github.com/onsi/gomega"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/test/framework"
)

// privateModule needs no provider: what it tests is where it comes from.
const privateModule = `
variable "name" { type = string }
resource "terraform_data" "db" { input = "private-${var.name}" }
output "endpoint" { value = terraform_data.db.output }
`

// privateClass is a ModuleClass for privateModule from src, without providers.
func privateClass(name string, src terraformv1.ModuleSource) *terraformv1.ModuleClass {
	c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name}}
	c.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	c.SpecTemplate.Source = src
	c.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}}
	c.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}}
	return c
}

// classConditions reads the class's Synced and Ready.
func classConditions(g Gomega, ctx context.Context, c *terraformv1.ModuleClass) (synced, ready metav1.Condition) {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	return framework.Condition(c.Status.Conditions, common.TypeSynced), framework.Condition(c.Status.Conditions, common.TypeReady)
}

// git runs the git CLI to build the test's repositories (the controller itself uses none).
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s (the tests need git)", strings.Join(args, " "), err, out)
	}
}

// bareRepo makes a repository with the module at modules/db on branch main, and a bare
// copy of it under root as name.git; commit pushes a new version of a file to it.
func bareRepo(t *testing.T, root, name string) (commit func(file, content string)) {
	t.Helper()
	work := t.TempDir()
	git(t, work, "init", "-q", "-b", "main")
	write := func(file, content string) {
		p := filepath.Join(work, "modules", "db", file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, work, "add", ".")
		git(t, work, "commit", "-q", "-m", "update "+file)
	}
	write("main.tf", privateModule)
	git(t, root, "clone", "-q", "--bare", work, name+".git")
	return func(file, content string) {
		write(file, content)
		git(t, work, "push", "-q", filepath.Join(root, name+".git"), "main")
	}
}

// gitHTTPServer serves the bare repositories under root with git's own smart-HTTP server
// (git http-backend through net/http/cgi), to a client that sends user and token as
// basic auth or token as a bearer token; with no token, to anyone.
func gitHTTPServer(t *testing.T, root, user, token string) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v (the tests need git)", err)
	}
	backend := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, basic := r.BasicAuth()
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token && (!basic || u != user || p != token) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestModuleFromPrivateGitOverHTTPS fetches a class's module from a git server that wants
// a token: a wrong token stops the class and its claim with a clear condition and no
// secret in it; fixing the Secret takes effect at once (a watch, not a retry); a moved
// branch reaches the class at the next refresh.
func TestModuleFromPrivateGitOverHTTPS(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-private-git"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	root := t.TempDir()
	push := bareRepo(t, root, "team")
	const token, wrong = "tok-3f9a-right", "tok-0000-wrong"
	url := gitHTTPServer(t, root, "terraplane", token) + "/team.git"
	// Problems are retried only every 10 minutes: what follows a fix is a watch at work.
	// The test's server speaks plain HTTP on loopback.
	mgr, err := env.StartManager(t.TempDir(), app.Options{UserErrorRetry: 10 * time.Minute, ModuleSourceRefresh: 2 * time.Second,
		AllowInsecureModuleSources: true})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "a wrong token: Synced=False and Ready=False on the class, and on the claim, without the token")
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "git-creds"},
		StringData: map[string]string{"username": "terraplane", "password": wrong}}
	g.Expect(env.Client.Create(ctx, creds)).To(Succeed())
	src := terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: url, Ref: "main", Path: "modules/db", SecretRef: &common.LocalReference{Name: "git-creds"}}}
	class := privateClass("private-git", src)
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced, ready := classConditions(g, ctx, class)
		for _, c := range []metav1.Condition{synced, ready} {
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(modsource.ReasonAuthFailed))
			g.Expect(c.Message).To(Equal("git " + url + ": authentication failed: it refused the credentials in Secret " + adminNS + "/git-creds"))
		}
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "private-git"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "private-git", Namespace: adminNS}})).To(Succeed())
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "gitdb"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "private-git"}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "gitdb-conn"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced := framework.Condition(claimStatus(g, ctx, claim).Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Message).To(ContainSubstring("authentication failed"))
	}).WithTimeout(timeout).Should(Succeed())
	events, err := env.Events(ctx, class)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(ContainElement(HaveField("Reason", modsource.ReasonAuthFailed)))
	for _, e := range events {
		g.Expect(e.Message).NotTo(Or(ContainSubstring(wrong), ContainSubstring(token)))
	}

	By(t, "the right token in the same Secret: the class is Ready at once and the claim runs")
	g.Expect(updateLatest(ctx, creds, func() {
		creds.Data["password"] = []byte(token)
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced, ready := classConditions(g, ctx, class)
		g.Expect(synced.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%+v", ready)
	}).WithTimeout(20 * time.Second).Should(Succeed())
	g.Expect(class.Status.Revision).To(MatchRegexp(`^[0-9a-f]{40}$`))
	first := class.Status.Revision
	g.Expect(updateLatest(ctx, claim, func() {
		claim.Annotations = map[string]string{"wake": "up"} // its own retry is 10 minutes away
	})).To(Succeed())
	waitClaimReady(g, ctx, claim)
	conn := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "gitdb-conn"}, conn)).To(Succeed())
	g.Expect(string(conn.Data["endpoint"])).To(Equal("private-gitdb"))

	By(t, "a new commit on the branch reaches the class at the next refresh")
	push("extra.tf", `variable "size" {
  type    = number
  default = 1
}`)
	g.Eventually(func(g Gomega) {
		_, ready := classConditions(g, ctx, class)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(class.Status.Revision).NotTo(Equal(first))
		g.Expect(class.Status.Variables).To(ContainElement(HaveField("Name", "size")))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	By(t, "a bearer token works too")
	bearer := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "git-bearer"}, StringData: map[string]string{"bearerToken": token}}
	g.Expect(env.Client.Create(ctx, bearer)).To(Succeed())
	src.Git.SecretRef.Name = "git-bearer"
	byBearer := privateClass("private-git-bearer", src)
	g.Expect(env.Client.Create(ctx, byBearer)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, ready := classConditions(g, ctx, byBearer)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%+v", ready)
	}).WithTimeout(timeout).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	}).WithTimeout(timeout).Should(BeTrue())
}

// TestGitFetchOverTheCap: a repository whose fetch brings more than
// --module-source-max-fetch stops its class with a condition that names the source and
// the limit, however little of it the module uses; a small repository on the same server
// loads.
func TestGitFetchOverTheCap(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	root := t.TempDir()
	bareRepo(t, root, "small")
	push := bareRepo(t, root, "large")
	blob := make([]byte, 3<<20) // random: the pack does not compress it
	_, _ = rand.Read(blob)
	push("../../assets/blob.bin", string(blob)) // beside the module, not in it
	const token = "tok-cap-7b1e"
	server := gitHTTPServer(t, root, "terraplane", token)
	mgr, err := env.StartManager(t.TempDir(), app.Options{UserErrorRetry: 10 * time.Minute, AllowInsecureModuleSources: true,
		ModuleSourceMaxFetch: 1 << 20})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "git-cap-creds"},
		StringData: map[string]string{"username": "terraplane", "password": token}})).To(Succeed())
	class := func(name, repo string) *terraformv1.ModuleClass {
		c := privateClass(name, terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: server + "/" + repo + ".git", Ref: "main",
			Path: "modules/db", SecretRef: &common.LocalReference{Name: "git-cap-creds"}}})
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		return c
	}

	By(t, "a fetch over the cap: Synced=False and Ready=False, naming the source and the limit")
	large := class("fetch-over-cap", "large")
	g.Eventually(func(g Gomega) {
		synced, ready := classConditions(g, ctx, large)
		for _, c := range []metav1.Condition{synced, ready} {
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("ModuleFetchTooLarge"))
			g.Expect(c.Message).To(ContainSubstring(server + "/large.git"))
			g.Expect(c.Message).To(ContainSubstring("more than 1Mi, the --module-source-max-fetch limit"))
		}
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a small repository on the same server loads")
	small := class("fetch-under-cap", "small")
	g.Eventually(func(g Gomega) {
		_, ready := classConditions(g, ctx, small)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%+v", ready)
	}).WithTimeout(timeout).Should(Succeed())
}

// gitSSHServer serves git-upload-pack for the bare repositories under root over SSH on
// loopback, to the one client key it accepts; it returns its address and host key.
func gitSSHServer(t *testing.T, root string, client ssh.PublicKey) (string, ssh.PublicKey) {
	t.Helper()
	_, hostKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(hostKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(k.Marshal(), client.Marshal()) {
			return nil, nil
		}
		return nil, fmt.Errorf("unknown key")
	}}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveSSH(conn, cfg, root)
		}
	}()
	return ln.Addr().String(), signer.PublicKey()
}

// serveSSH runs `git upload-pack` for each exec request of one connection.
func serveSSH(conn net.Conn, cfg *ssh.ServerConfig, root string) {
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range requests {
				var payload struct{ Command string }
				if req.Type != "exec" || ssh.Unmarshal(req.Payload, &payload) != nil || !strings.HasPrefix(payload.Command, "git-upload-pack ") {
					_ = req.Reply(false, nil)
					continue
				}
				_ = req.Reply(true, nil)
				repo := strings.Trim(strings.TrimPrefix(payload.Command, "git-upload-pack "), "'")
				cmd := exec.Command("git", "upload-pack", filepath.Join(root, filepath.Clean("/"+repo)))
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				status := uint32(0)
				if cmd.Run() != nil {
					status = 1
				}
				_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
				return
			}
		}()
	}
}

// TestModuleFromPrivateGitOverSSH fetches a class's module over SSH with a private key:
// an unknown host key is refused and named; the right known_hosts makes the class Ready.
func TestModuleFromPrivateGitOverSSH(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	root := t.TempDir()
	bareRepo(t, root, "team")
	clientPub, clientKey, err := ed25519.GenerateKey(rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	sshPub, err := ssh.NewPublicKey(clientPub)
	g.Expect(err).NotTo(HaveOccurred())
	addr, hostKey := gitSSHServer(t, root, sshPub)
	block, err := ssh.MarshalPrivateKey(clientKey, "")
	g.Expect(err).NotTo(HaveOccurred())
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	otherSigner, _ := ssh.NewSignerFromKey(otherKey)
	mgr, err := env.StartManager(t.TempDir(), app.Options{UserErrorRetry: 10 * time.Minute})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "known_hosts that does not know the server: refused, and said so")
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "git-ssh"}, Data: map[string][]byte{
		"identity":    pem.EncodeToMemory(block),
		"known_hosts": []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, otherSigner.PublicKey()) + "\n"),
	}}
	g.Expect(env.Client.Create(ctx, creds)).To(Succeed())
	url := "ssh://git@" + addr + "/team.git"
	class := privateClass("private-ssh", terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: url, Ref: "main", Path: "modules/db",
		SecretRef: &common.LocalReference{Name: "git-ssh"}}})
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced, _ := classConditions(g, ctx, class)
		g.Expect(synced.Reason).To(Equal(modsource.ReasonHostKeyRejected))
		g.Expect(synced.Message).To(ContainSubstring("the server's SSH host key is not in known_hosts of Secret " + adminNS + "/git-ssh"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the server's key in known_hosts: Ready at once")
	g.Expect(updateLatest(ctx, creds, func() {
		creds.Data["known_hosts"] = []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, hostKey) + "\n")
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, ready := classConditions(g, ctx, class)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%+v", ready)
		g.Expect(class.Status.Variables).To(ContainElement(HaveField("Name", "name")))
	}).WithTimeout(20 * time.Second).Should(Succeed())
}

// authRegistry serves a real OCI registry (go-containerregistry's) on loopback behind
// basic auth; it returns its host:port.
func authRegistry(t *testing.T, user, password string) string {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// dockerConfigSecret is a pull secret as kubectl create secret docker-registry makes it.
func dockerConfigSecret(ns, name, host, user, password string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": {"` + host + `": {"auth": "` + auth + `"}}}`)}}
}

// TestModuleFromPrivateOCI pulls a class's module from a registry that wants credentials,
// through a pull secret read with authn/kubernetes; a tag pushed anew reaches the class.
func TestModuleFromPrivateOCI(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	host := authRegistry(t, "puller", "pull-s3cret")
	ref := host + "/modules/private:v1"
	push := func(module string) {
		img, err := crane.Image(map[string][]byte{"modules/db/main.tf": []byte(module)})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(crane.Push(img, ref, crane.WithAuth(&authn.Basic{Username: "puller", Password: "pull-s3cret"}))).To(Succeed())
	}
	push(privateModule)
	mgr, err := env.StartManager(t.TempDir(), app.Options{UserErrorRetry: 10 * time.Minute, ModuleSourceRefresh: 2 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "no pull secret: the registry's refusal is named")
	src := terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: ref, Path: "modules/db"}}
	class := privateClass("private-oci", src)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced, ready := classConditions(g, ctx, class)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Reason).To(Equal(modsource.ReasonAuthFailed))
		g.Expect(synced.Message).To(Equal("pull " + ref + ": the registry asks for credentials (Unauthorized): name a pull secret in secretRef"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a pull secret that does not exist yet, then is created: Ready at once")
	g.Expect(updateLatest(ctx, class, func() {
		class.SpecTemplate.Source.OCI.SecretRef = &common.LocalReference{Name: "registry-creds"}
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced, _ := classConditions(g, ctx, class)
		g.Expect(synced.Reason).To(Equal(modsource.ReasonSecretNotFound))
		g.Expect(synced.Message).To(ContainSubstring("Secret " + adminNS + "/registry-creds named by the source's secretRef does not exist"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Create(ctx, dockerConfigSecret(adminNS, "registry-creds", host, "puller", "pull-s3cret"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, ready := classConditions(g, ctx, class)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%+v", ready)
	}).WithTimeout(20 * time.Second).Should(Succeed())
	g.Expect(class.Status.Revision).To(HavePrefix("sha256:"))
	first := class.Status.Revision

	By(t, "the tag pushed anew: the class follows it at the next refresh")
	push(privateModule + `variable "size" {
  type    = number
  default = 1
}
`)
	g.Eventually(func(g Gomega) {
		_, ready := classConditions(g, ctx, class)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(class.Status.Revision).NotTo(Equal(first))
		g.Expect(class.Status.Variables).To(ContainElement(HaveField("Name", "size")))
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// tokenModule fails to apply unless terraform's environment holds the registry token.
const tokenModule = `
resource "terraform_data" "check" {
  provisioner "local-exec" {
    command = "test -n \"$TF_TOKEN_registry_example_com\""
  }
}
`

// TestRegistryTokenReachesTerraform: a ProviderConfig may deliver TF_TOKEN_<host> (a
// private registry's token) from a Secret; other TF_ variables stay refused. The token
// reaches terraform's environment and nothing else: not status, not events, not the
// workspace.
func TestRegistryTokenReachesTerraform(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	pc := func(name, envName string) *terraformv1.ProviderConfig {
		return &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name}, Spec: terraformv1.ProviderConfigSpec{
			Source: "hashicorp/random", Version: "3.9.0",
			Credentials: []terraformv1.CredentialEnv{{Env: envName, SecretKeyRef: terraformv1.SecretKeySelector{Name: "registry-token", Key: "token"}}}}}
	}
	for _, refused := range []string{"TF_LOG", "TF_TOKEN_", "TF_CLI_CONFIG_FILE"} {
		err := env.Client.Create(ctx, pc("refused", refused))
		g.Expect(err).To(MatchError(ContainSubstring("only TF_TOKEN_<host> (a private registry's token) is allowed")), refused)
	}
	const token = "registry-token-7d1e"
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "registry-token"},
		StringData: map[string]string{"token": token}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, pc("private-registry", "TF_TOKEN_registry_example_com"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "token-module"},
		Data: map[string]string{"main.tf": tokenModule}})).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "token-check"}}
	m.Spec.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "token-module"}
	m.Spec.ProviderRef = &common.LocalReference{Name: "private-registry"}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(framework.Condition(m.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "%+v", m.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())
	status, err := json.Marshal(m.Status)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(status)).NotTo(ContainSubstring(token))
	events, err := env.Events(ctx, m)
	g.Expect(err).NotTo(HaveOccurred())
	for _, e := range events {
		g.Expect(e.Message).NotTo(ContainSubstring(token))
	}
	g.Expect(mgr.Stop()).To(Succeed())
	g.Expect(filepath.WalkDir(mgr.WorkDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err // provider directories are links into the mirror
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(token)) {
			return fmt.Errorf("%s holds the registry token", p)
		}
		return err
	})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
}

// TestGitSourceValidation: CRD validation refuses sources that could never work, or leak.
func TestGitSourceValidation(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	for name, tc := range map[string]struct {
		src  terraformv1.GitSource
		want string
	}{
		"credentials in the URL": {terraformv1.GitSource{URL: "https://me:tok@git.example.com/team.git", Ref: "main"}, "put credentials in the Secret named by secretRef"},
		"a token in the URL":     {terraformv1.GitSource{URL: "https://tok@git.example.com/team.git", Ref: "main"}, "put credentials in the Secret named by secretRef"},
		"an unknown scheme":      {terraformv1.GitSource{URL: "ftp://git.example.com/team.git", Ref: "main"}, "url must start with https://"},
		"file with credentials": {terraformv1.GitSource{URL: "file:///srv/team.git", Ref: "main", SecretRef: &common.LocalReference{Name: "x"}},
			"file:// repositories take no secretRef"},
	} {
		c := privateClass("invalid", terraformv1.ModuleSource{Git: &tc.src})
		g.Expect(env.Client.Create(ctx, c)).To(MatchError(ContainSubstring(tc.want)), name)
	}
	ok := privateClass("scp-like", terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "git@github.com:team/modules.git", Ref: "v1.2.0",
		SecretRef: &common.LocalReference{Name: "git-ssh"}}})
	g.Expect(env.Client.Create(ctx, ok)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, ok)).To(Succeed())
}
