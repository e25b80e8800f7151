package install

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
)

// networkMirror writes the tool cache's providers of host/ns/typ in the network-mirror
// layout (index.json, <version>.json, and zip archives with their zh: hashes) under dir.
func networkMirror(g Gomega, dir, host, ns, typ string) {
	src := filepath.Join(devenv.PluginMirror(), host, ns, typ)
	versions, err := os.ReadDir(src)
	g.Expect(err).NotTo(HaveOccurred(), "the provider mirror comes from `make tools-test`")
	out := filepath.Join(dir, host, ns, typ)
	g.Expect(os.MkdirAll(out, 0o755)).To(Succeed())
	index := map[string]map[string]any{"versions": {}}
	for _, v := range versions {
		bins, err := filepath.Glob(filepath.Join(src, v.Name(), "linux_amd64", "terraform-provider-"+typ+"*"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bins).To(HaveLen(1))
		archive := fmt.Sprintf("terraform-provider-%s_%s_linux_amd64.zip", typ, v.Name())
		sum := zipFile(g, filepath.Join(out, archive), bins[0])
		meta := map[string]any{"archives": map[string]any{"linux_amd64": map[string]any{"url": archive, "hashes": []string{"zh:" + sum}}}}
		writeJSON(g, filepath.Join(out, v.Name()+".json"), meta)
		index["versions"][v.Name()] = map[string]any{}
	}
	writeJSON(g, filepath.Join(out, "index.json"), index)
}

// zipFile zips bin into path and returns the archive's SHA-256.
func zipFile(g Gomega, path, bin string) string {
	f, err := os.Create(path)
	g.Expect(err).NotTo(HaveOccurred())
	zw := zip.NewWriter(f)
	hdr := &zip.FileHeader{Name: filepath.Base(bin), Method: zip.Store}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	g.Expect(err).NotTo(HaveOccurred())
	in, err := os.Open(bin)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = io.Copy(w, in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Close()).To(Succeed())
	g.Expect(zw.Close()).To(Succeed())
	g.Expect(f.Close()).To(Succeed())
	raw, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

func writeJSON(g Gomega, path string, v any) {
	raw, err := json.Marshal(v)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(path, raw, 0o644)).To(Succeed())
}

// TestNetworkMirror serves the tool cache's random provider from an HTTPS server on
// loopback in the network-mirror layout; a controller with no filesystem mirror
// initialises two Modules' workspaces from it, downloading the provider once into the
// shared plugin cache, and a ModuleClass needing a version the mirror lacks says so.
func TestNetworkMirror(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	dir := t.TempDir()
	networkMirror(g, dir, "registry.terraform.io", "hashicorp", "random")

	var mu sync.Mutex
	var served []string
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.Method+" "+r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	// terraform trusts the server's certificate through SSL_CERT_FILE, as it would a
	// company CA given to the controller's container.
	ca := filepath.Join(dir, "ca.pem")
	g.Expect(os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)).To(Succeed())
	t.Setenv("SSL_CERT_FILE", ca)

	cache := filepath.Join(dir, "plugin-cache")
	mgr, err := env.StartManager(t.TempDir(), app.Options{Engine: engine.Options{PluginMirror: filepath.Join(dir, "no-filesystem-mirror"),
		NetworkMirror: srv.URL + "/", PluginCacheDir: cache}})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	const ns = "mirror-admin"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-module"},
		Data: map[string]string{"main.tf": randomModule}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}})).To(Succeed())
	downloads := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, p := range served {
			if strings.HasPrefix(p, "GET ") && strings.HasSuffix(p, ".zip") {
				n++
			}
		}
		return n
	}
	var mods []*terraformv1.Module
	defer func() {
		for _, mod := range mods {
			_ = env.Client.Delete(ctx, mod)
		}
		for _, mod := range mods {
			g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)) }).
				WithTimeout(time.Minute).Should(BeTrue(), "Module %s is deleted", mod.Name)
		}
	}()
	afterFirst := 0
	for _, name := range []string{"one", "two"} {
		mod := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		mod.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "team-module"}}
		mod.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
		mod.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"name": "` + name + `"}`)}
		mod.Spec.ReclaimPolicy = common.ReclaimDelete
		g.Expect(env.Client.Create(ctx, mod)).To(Succeed())
		mods = append(mods, mod)
		waitReady(g, ctx, mod, func() []metav1.Condition { return mod.Status.Conditions })
		if afterFirst == 0 {
			afterFirst = downloads()
		}
	}
	g.Expect(afterFirst).To(BeNumerically(">=", 1), "the first workspace downloads the provider from the network mirror")
	g.Expect(downloads()).To(Equal(afterFirst), "the second workspace takes the provider from the plugin cache")

	By(t, "a ModuleClass whose module needs a provider version the mirror lacks is not Ready, and says why")
	for name, constraint := range map[string]string{"random-any": "", "random-4": `, version = "~> 4.0"`} {
		module := strings.Replace(randomModule, `source = "hashicorp/random"`, `source = "hashicorp/random"`+constraint, 1)
		g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data: map[string]string{"main.tf": module}})).To(Succeed())
		class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
		class.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: name}}
		class.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
		class.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"name": "x"}`)}
		g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	}
	anyVersion := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random-any"}}
	waitReady(g, ctx, anyVersion, func() []metav1.Condition { return anyVersion.Status.Conditions })
	tooNew := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random-4"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tooNew), tooNew)).To(Succeed())
		g.Expect(tooNew.Status.Conditions).To(ContainElement(And(HaveField("Type", common.TypeReady), HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", "ProviderUnavailable"),
			HaveField("Message", "provider registry.terraform.io/hashicorp/random ~> 4.0 is not in the provider mirror (it holds 3.9.0)"))))
	}).WithTimeout(time.Minute).Should(Succeed())
	g.Eventually(func(g Gomega) {
		events, err := env.Events(ctx, tooNew)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).To(ConsistOf(HaveField("Reason", "ProviderUnavailable")), "one event for the problem")
	}).WithTimeout(30 * time.Second).Should(Succeed())

	mu.Lock()
	g.Expect(served).To(ContainElement("GET /registry.terraform.io/hashicorp/random/index.json"))
	mu.Unlock()
	cached, err := filepath.Glob(filepath.Join(cache, "registry.terraform.io", "hashicorp", "random", "*", "linux_amd64", "terraform-provider-random*"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cached).NotTo(BeEmpty(), "the provider is in the shared plugin cache")
}
