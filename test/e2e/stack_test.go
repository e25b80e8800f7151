package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/stackpkg"
	"terraplane.io/terraplane/test/framework"
)

// stackTimeout is generous: late in a full e2e run the machine is busy with the
// resources earlier tests left behind.
const stackTimeout = 2 * time.Minute

var (
	cliOnce sync.Once
	cliPath string
	cliDir  string // where cliPath was built; removed when the tests end
	cliErr  error
)

// terraplaneBinary is the real terraplane binary, built once per test binary.
func terraplaneBinary(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		// one directory per test binary, so concurrent runs never replace each other's
		// binary; run removes it when the tests end
		dir, err := os.MkdirTemp("", "terraplane-e2e-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliDir = dir
		cliPath = filepath.Join(dir, "terraplane")
		out, err := exec.Command("go", "build", "-o", cliPath, "../../cmd/terraplane").CombinedOutput()
		if err != nil {
			cliErr = &exec.ExitError{Stderr: out}
		}
	})
	if cliErr != nil {
		t.Fatalf("build terraplane: %v", cliErr)
	}
	return cliPath
}

// terraplaneCLI runs the real terraplane binary and returns its output.
func terraplaneCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(terraplaneBinary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("terraplane %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// stackRegistry serves a real OCI registry (go-containerregistry's) on loopback.
func stackRegistry(t *testing.T) string {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// pushStacks pushes sample packages with `terraplane stack push`: dir → repo:tag.
func pushStacks(t *testing.T, host string, pkgs map[string]string) {
	for dir, ref := range pkgs {
		out := terraplaneCLI(t, "stack", "push", filepath.Join("testdata/stacks", dir), host+"/"+ref)
		if !strings.Contains(out, "pushed "+host+"/"+strings.Split(ref, ":")[0]+"@sha256:") {
			t.Fatalf("unexpected push output: %s", out)
		}
		// Progress comes before the result, so a slow push is not silent.
		for _, step := range []string{"reading the package in ", "building and pushing " + host + "/" + ref} {
			if i := strings.Index(out, step); i < 0 || i > strings.Index(out, "pushed ") {
				t.Fatalf("push output has no %q before its result: %s", step, out)
			}
		}
	}
}

func startStackManager(t *testing.T, host string) {
	mgr, err := env.StartManager(t.TempDir(), app.Options{StackRegistry: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Stop() })
}

func clusterInstall(name, pkg, crd string) *stacksv1.ClusterStackInstall {
	in := &stacksv1.ClusterStackInstall{ObjectMeta: metav1.ObjectMeta{Name: name}}
	in.Spec.Package, in.Spec.CRD = pkg, crd
	return in
}

type installer interface {
	client.Object
	stacksv1.Installer
}

// installCondition reads the install and returns its condition typ.
func installCondition(g Gomega, ctx context.Context, in installer, typ string) metav1.Condition {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(in), in)).To(Succeed())
	return framework.Condition(in.GetInstallStatus().Conditions, typ)
}

func waitInstallReady(g Gomega, ctx context.Context, in installer) {
	g.Eventually(func(g Gomega) {
		ready := installCondition(g, ctx, in, common.TypeReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %+v", ready)
	}).WithTimeout(stackTimeout).Should(Succeed())
}

// waitGone waits for every obj to be deleted; a timeout names the object, its finalizers
// and, for an install, its conditions.
func waitGone(g Gomega, ctx context.Context, objs ...client.Object) {
	for _, obj := range objs {
		g.Eventually(func() error {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			state := fmt.Sprintf("%T %s is still there (deleting since %v, finalizers %v)", obj, obj.GetName(), obj.GetDeletionTimestamp(), obj.GetFinalizers())
			if in, ok := obj.(installer); ok {
				state += fmt.Sprintf(", conditions %+v", in.GetInstallStatus().Conditions)
			}
			return errors.New(state)
		}).WithTimeout(stackTimeout).Should(Succeed())
	}
}

func getCRD(g Gomega, ctx context.Context, name string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
	return crd
}

func crdExists(ctx context.Context, name string) bool {
	return env.Client.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{}) == nil
}

func TestStackInstallChainUpgradeUninstall(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	host := stackRegistry(t)
	pushStacks(t, host, map[string]string{"gamma": "stacks/gamma:v1", "beta": "stacks/beta:v1", "alpha": "stacks/alpha:v1"})

	By(t, "stack build and inspect describe the package")
	g.Expect(terraplaneCLI(t, "stack", "build", "testdata/stacks/alpha")).To(ContainSubstring("owns sprockets.alpha.example.org/v1alpha1,widgets.alpha.example.org/v1alpha1"))
	out := terraplaneCLI(t, "stack", "inspect", host+"/stacks/alpha:v1")
	g.Expect(out).To(And(ContainSubstring(`"gadgets.beta.example.org/v1alpha1"`), ContainSubstring(`".registry/resources/alpha/widget.icon.svg"`)))
	out = terraplaneCLI(t, "stack", "index", host)
	g.Expect(strings.Fields(out)).To(Equal([]string{"PACKAGE", "OWNS", "DEPENDS", "ON",
		"stacks/alpha:v1", "sprockets.alpha.example.org/v1alpha1,widgets.alpha.example.org/v1alpha1", "gadgets.beta.example.org/v1alpha1",
		"stacks/beta:v1", "gadgets.beta.example.org/v1alpha1", "*.gamma.example.org/v1alpha1",
		"stacks/gamma:v1", "things.gamma.example.org/v1alpha1", "-"}))
	startStackManager(t, host)

	By(t, "installing alpha installs beta and gamma first, through the index")
	alpha := clusterInstall("alpha", "stacks/alpha:v1", "")
	g.Expect(env.Client.Create(ctx, alpha)).To(Succeed())
	waitInstallReady(g, ctx, alpha)
	beta, gamma := &stacksv1.ClusterStackInstall{}, &stacksv1.ClusterStackInstall{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "beta"}, beta)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "gamma"}, gamma)).To(Succeed())
	g.Expect(beta.Annotations[stacksv1.AnnotationDependencyOf]).To(Equal("ClusterStackInstall/alpha"))
	g.Expect(gamma.Annotations[stacksv1.AnnotationDependencyOf]).To(Equal("ClusterStackInstall/beta"))
	g.Expect(gamma.Spec.Package).To(Equal("stacks/gamma:v1"))
	for _, typ := range []string{stacksv1.TypeResolved, stacksv1.TypeUnpacked, stacksv1.TypeDependenciesReady, stacksv1.TypeInstalled, stacksv1.TypeControllerReady, common.TypeSynced} {
		g.Expect(framework.Condition(alpha.Status.Conditions, typ).Status).To(Equal(metav1.ConditionTrue), typ)
	}
	g.Expect(alpha.Status.ResolvedPackage).To(HavePrefix(host + "/stacks/alpha@sha256:"))
	g.Expect(alpha.Status.InstalledCRDs).To(Equal([]string{"sprockets.alpha.example.org", "widgets.alpha.example.org"}))

	By(t, "steady state writes nothing")
	rv := func(obj client.Object) string {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		return obj.GetResourceVersion()
	}
	steady := []client.Object{alpha, &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "alpha"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.alpha.example.org"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "alpha-controller"}}}
	before := []string{}
	for _, o := range steady {
		before = append(before, rv(o))
	}
	time.Sleep(6 * time.Second) // longer than the install's wait retry
	for i, o := range steady {
		g.Expect(rv(o)).To(Equal(before[i]), "%T %s changed at rest", o, o.GetName())
	}

	By(t, "the Stack record carries app.yaml")
	st := &stacksv1.Stack{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "alpha"}, st)).To(Succeed())
	svg, err := os.ReadFile("testdata/stacks/alpha/.registry/icon.svg")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Spec.AppMetadataSpec).To(Equal(stacksv1.AppMetadataSpec{
		Title: "Alpha Widgets", OverviewShort: "Widgets for every cluster.", Overview: "Alpha manages widgets, which are made of gadgets.",
		Readme: "# Alpha\nUse widgets.", Version: "1.0.0", Icons: []stacksv1.Icon{{MediaType: "image/svg+xml", Base64Data: base64.StdEncoding.EncodeToString(svg)}},
		Maintainers: []stacksv1.Contributor{{Name: "Ada Alpha", Email: "ada@example.org"}}, Owners: []stacksv1.Contributor{{Name: "Alpha Team", Email: "alpha@example.org"}},
		Company: "Example Org", Category: "Application", Keywords: []string{"widgets", "alpha"}, Website: "https://alpha.example.org",
		Source: "https://github.com/example/alpha", License: "Apache-2.0", PermissionScope: stacksv1.PermissionScopeCluster,
		DependsOn: []stacksv1.CRDDependency{{CRD: "gadgets.beta.example.org/v1alpha1"}},
	}))
	g.Expect(st.Spec.CRDs.Owned).To(Equal(stacksv1.CRDList{"sprockets.alpha.example.org/v1alpha1", "widgets.alpha.example.org/v1alpha1"}))
	g.Expect(st.Spec.CRDs.DependsOn).To(Equal(stacksv1.CRDList{"gadgets.beta.example.org/v1alpha1"}))
	g.Expect(st.Spec.Controller.Deployment.Name).To(Equal("alpha-controller"))

	By(t, "the CRDs carry every seed annotation")
	widgets := getCRD(g, ctx, "widgets.alpha.example.org")
	for k, v := range map[string]string{
		stackpkg.AnnotationStackTitle: "Alpha Widgets", stackpkg.AnnotationGroupTitle: "Alpha Group", stackpkg.AnnotationGroupOverview: "Everything alpha.",
		stackpkg.AnnotationGroupOverviewShort: "The alpha group.", stackpkg.AnnotationGroupReadme: "# Alpha group", stackpkg.AnnotationResourceCategory: "Application",
		stackpkg.AnnotationResourceTitle: "Widget", stackpkg.AnnotationResourceTitlePlural: "Widgets", stackpkg.AnnotationResourceOverview: "A widget is small.",
		stackpkg.AnnotationResourceOverviewSh: "A widget.", stackpkg.AnnotationResourceReadme: "# Widget",
		stackpkg.AnnotationUISchema: "configSections:\n- title: Common\n\n---\nconfigSections:\n- title: Widget", stacksv1.AnnotationOwner: "ClusterStackInstall/alpha",
	} {
		g.Expect(widgets.Annotations).To(HaveKeyWithValue(k, v))
	}
	icon, err := os.ReadFile("testdata/stacks/alpha/.registry/resources/alpha/widget.icon.svg")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(widgets.Annotations).To(HaveKeyWithValue(stackpkg.AnnotationIconDataURI, "data:image/svg+xml;base64,"+base64.StdEncoding.EncodeToString(icon)))

	By(t, "Cluster scope: a ClusterRole over owned and dependsOn CRDs; Namespaced scope (beta): a Role in the stack's namespace")
	cr := &rbacv1.ClusterRole{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "stacks.terraplane.io:" + adminNS + ":alpha"}, cr)).To(Succeed())
	g.Expect(cr.Rules).To(ContainElements(
		HaveField("APIGroups", []string{"alpha.example.org"}),
		And(HaveField("APIGroups", []string{"beta.example.org"}), HaveField("Resources", ContainElement("gadgets")), HaveField("Verbs", ContainElements("create", "delete", "watch"))),
		And(HaveField("APIGroups", []string{""}), HaveField("Resources", ContainElement("secrets"))),
	))
	g.Expect(cr.Rules[0].Resources).To(ContainElements("widgets", "widgets/status", "sprockets"))
	crb := &rbacv1.ClusterRoleBinding{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: cr.Name}, crb)).To(Succeed())
	g.Expect(crb.Subjects).To(Equal([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "alpha", Namespace: adminNS}}))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "alpha"}, &corev1.ServiceAccount{})).To(Succeed())
	betaRole := &rbacv1.Role{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "beta"}, betaRole)).To(Succeed())
	g.Expect(betaRole.Rules).To(ContainElement(And(HaveField("APIGroups", []string{"gamma.example.org"}), HaveField("Resources", []string{"*"}))), "a wildcard dependsOn grants the whole group")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "beta"}, &rbacv1.RoleBinding{})).To(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "stacks.terraplane.io:" + adminNS + ":beta"}, &rbacv1.ClusterRole{}))).To(BeTrue())

	By(t, "the controller Deployment runs as the stack's ServiceAccount with POD_NAME and POD_NAMESPACE")
	dep := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "alpha-controller"}, dep)).To(Succeed())
	pod := dep.Spec.Template.Spec
	g.Expect(pod.ServiceAccountName).To(Equal("alpha"))
	g.Expect(pod.Containers[0].Image).To(Equal("example.org/alpha-controller:v1"))
	g.Expect(pod.Containers[0].Env).To(ContainElements(
		HaveField("ValueFrom.FieldRef.FieldPath", "metadata.name"), HaveField("ValueFrom.FieldRef.FieldPath", "metadata.namespace")))
	g.Expect(pod.Containers[0].Env[0].Name).To(Equal("POD_NAME"))

	By(t, "upgrade: a new tag applies the new CRD version and updates the Deployment")
	pushStacks(t, host, map[string]string{"gamma-v2": "stacks/gamma:v2"})
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(gamma), gamma)).To(Succeed())
	v1Package := gamma.Status.ResolvedPackage
	g.Expect(v1Package).To(HavePrefix(host + "/stacks/gamma@sha256:"))
	g.Expect(updateLatest(ctx, gamma, func() { gamma.Spec.Package = "stacks/gamma:v2" })).To(Succeed())
	g.Eventually(func(g Gomega) {
		things := getCRD(g, ctx, "things.gamma.example.org")
		g.Expect(things.Spec.Versions).To(HaveLen(2))
		d := &appsv1.Deployment{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "gamma-controller"}, d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("example.org/gamma-controller:v2"))
		s := &stacksv1.Stack{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "gamma"}, s)).To(Succeed())
		g.Expect(s.Spec.Version).To(Equal("2.0.0"))
		g.Expect(installCondition(g, ctx, gamma, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(gamma.Status.ResolvedPackage).NotTo(Equal(v1Package))
	}).WithTimeout(stackTimeout).Should(Succeed())

	By(t, "uninstall keeps a CRD that still has custom resources and removes everything else")
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("alpha.example.org/v1alpha1")
	widget.SetKind("Widget")
	widget.SetNamespace(adminNS)
	widget.SetName("precious")
	g.Expect(env.Client.Create(ctx, widget)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, alpha)).To(Succeed())
	waitGone(g, ctx, alpha, &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "alpha"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "alpha-controller"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: cr.Name}}, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cr.Name}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "alpha"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "sprockets.alpha.example.org"}})
	widgets = getCRD(g, ctx, "widgets.alpha.example.org")
	g.Expect(widgets.Annotations).To(HaveKeyWithValue(stacksv1.AnnotationKeptFrom, "ClusterStackInstall/alpha"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(widget), widget)).To(Succeed(), "no user data lost")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(beta), beta)).To(Succeed(), "dependencies stay installed")

	By(t, "uninstalling stacks without custom resources removes their CRDs")
	g.Expect(env.Client.Delete(ctx, beta)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, gamma)).To(Succeed())
	waitGone(g, ctx, beta, gamma, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "beta"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "gamma-controller"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "gadgets.beta.example.org"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "things.gamma.example.org"}})

	By(t, "a reinstall adopts the kept CRD")
	again := clusterInstall("alpha", "stacks/alpha:v1", "")
	g.Expect(env.Client.Create(ctx, again)).To(Succeed())
	waitInstallReady(g, ctx, again)
	g.Expect(getCRD(g, ctx, "widgets.alpha.example.org").Annotations).To(HaveKeyWithValue(stacksv1.AnnotationOwner, "ClusterStackInstall/alpha"))
	g.Expect(env.Client.Delete(ctx, widget)).To(Succeed())
	waitGone(g, ctx, widget)
	for _, n := range []string{"alpha", "beta", "gamma"} {
		_ = env.Client.Delete(ctx, &stacksv1.ClusterStackInstall{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	waitGone(g, ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.alpha.example.org"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "things.gamma.example.org"}})
}

func TestStackInstallByCRDAndScope(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-stack-ns"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	host := stackRegistry(t)
	pushStacks(t, host, map[string]string{"epsilon": "stacks/epsilon:v1", "gamma": "stacks/gamma:v1", "beta": "stacks/beta:v1"})
	startStackManager(t, host)

	By(t, "a namespaced StackInstall by CRD: Role, RoleBinding and Deployment in its namespace")
	in := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}}
	in.Spec.CRD = "notes.epsilon.example.org/v1alpha1"
	g.Expect(env.Client.Create(ctx, in)).To(Succeed())
	waitInstallReady(g, ctx, in)
	g.Expect(in.Status.ResolvedPackage).To(HavePrefix(host + "/stacks/epsilon@sha256:"))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "notes"}, &rbacv1.Role{})).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "notes"}, &rbacv1.RoleBinding{})).To(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "stacks.terraplane.io:" + ns + ":notes"}, &rbacv1.ClusterRole{}))).To(BeTrue())
	dep := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "epsilon-controller"}, dep)).To(Succeed())
	g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal("notes"))
	g.Eventually(func(g Gomega) {
		events, err := env.Events(ctx, in)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).To(ConsistOf(And(HaveField("Reason", stacksv1.ReasonInstalled), HaveField("Message", "installed "+in.Status.ResolvedPackage))))
	}).WithTimeout(stackTimeout).Should(Succeed())

	By(t, "an install by CRD stays on the package it resolved when a newer one is pushed")
	newer := t.TempDir()
	g.Expect(os.CopyFS(newer, os.DirFS("testdata/stacks/epsilon"))).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(newer, ".registry/app.yaml"), []byte("title: Epsilon Notes\nversion: 2.0.0\npermissionScope: Namespaced\n"), 0o644)).To(Succeed())
	terraplaneCLI(t, "stack", "push", newer, host+"/stacks/epsilon:v2")
	resolved := in.Status.ResolvedPackage
	g.Expect(updateLatest(ctx, in, func() {
		in.Annotations = map[string]string{"touch": "wake the reconciler"}
	})).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(installCondition(g, ctx, in, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(in.Status.ResolvedPackage).To(Equal(resolved))
		notes := &stacksv1.Stack{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "notes"}, notes)).To(Succeed())
		g.Expect(notes.Spec.Version).To(Equal("1.0.0"))
	}).WithTimeout(4 * time.Second).Should(Succeed())

	By(t, "a namespaced StackInstall may not install a Cluster-scoped package")
	wide := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wide"}}
	wide.Spec.CRD = "things.gamma.example.org/v1alpha1"
	g.Expect(env.Client.Create(ctx, wide)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, wide, stacksv1.TypeUnpacked)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonScopeNotAllowed))
		g.Expect(c.Message).To(ContainSubstring("install it with a ClusterStackInstall"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(crdExists(ctx, "things.gamma.example.org")).To(BeFalse())

	By(t, "a dependency that cannot be installed is named in the dependent's condition")
	nsBeta := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "beta"}}
	nsBeta.Spec.Package = "stacks/beta:v1"
	g.Expect(env.Client.Create(ctx, nsBeta)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, nsBeta, stacksv1.TypeDependenciesReady)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonWaitingForDependencies))
		g.Expect(c.Message).To(ContainSubstring("*.gamma.example.org/v1alpha1 from stacks/gamma:v1 (install gamma: PermissionScopeNotAllowed"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	nsGamma := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gamma"}}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nsGamma), nsGamma)).To(Succeed())
	g.Expect(nsGamma.Annotations[stacksv1.AnnotationDependencyOf]).To(Equal("StackInstall/" + ns + "/beta"))

	By(t, "a tag that is not in the registry")
	missing := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "missing"}}
	missing.Spec.Package = "stacks/epsilon:v9"
	g.Expect(env.Client.Create(ctx, missing)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, missing, stacksv1.TypeUnpacked)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonPackageNotFound))
		g.Expect(c.Message).To(ContainSubstring("package " + host + "/stacks/epsilon:v9 is not in the registry"))
	}).WithTimeout(stackTimeout).Should(Succeed())

	By(t, "a CRD no package owns")
	unknown := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unknown"}}
	unknown.Spec.CRD = "ghosts.nowhere.example.org/v1"
	g.Expect(env.Client.Create(ctx, unknown)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, unknown, common.TypeReady)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonCRDNotFound))
		g.Expect(c.Message).To(ContainSubstring("no package in registry " + host + " owns ghosts.nowhere.example.org/v1"))
	}).WithTimeout(stackTimeout).Should(Succeed())

	for _, o := range []client.Object{in, wide, unknown, nsBeta, nsGamma, missing} {
		g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
	}
	waitGone(g, ctx, in, wide, unknown, nsBeta, nsGamma, missing, dep, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "notes.epsilon.example.org"}})
}

func TestStackDependencyCycleAndMissing(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	host := stackRegistry(t)
	pushStacks(t, host, map[string]string{"cycle-x": "stacks/cycle-x:v1", "cycle-y": "stacks/cycle-y:v1", "orphan": "stacks/orphan:v1",
		"beta": "stacks/beta:v1", "gamma": "stacks/gamma:v1"})
	startStackManager(t, host)

	By(t, "an install that a dependency needs, taken by another package, is a conflict")
	squatter := clusterInstall("gamma", "stacks/orphan:v1", "")
	g.Expect(env.Client.Create(ctx, squatter)).To(Succeed())
	beta := clusterInstall("beta", "stacks/beta:v1", "")
	g.Expect(env.Client.Create(ctx, beta)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, beta, stacksv1.TypeDependenciesReady)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonConflict))
		g.Expect(c.Message).To(ContainSubstring("needs an install named gamma, which exists for another package (stacks/orphan:v1)"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, beta)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, squatter)).To(Succeed())
	waitGone(g, ctx, beta, squatter)

	By(t, "a cycle and a missing dependency")

	x := clusterInstall("cycle-x", "stacks/cycle-x:v1", "")
	orphan := clusterInstall("orphan", "stacks/orphan:v1", "")
	g.Expect(env.Client.Create(ctx, x)).To(Succeed())
	g.Expect(env.Client.Create(ctx, orphan)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, x, stacksv1.TypeDependenciesReady)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonDependencyCycle))
		g.Expect(c.Message).To(Equal("dependency cycle: stacks/cycle-x → stacks/cycle-y → stacks/cycle-x"))
		c = installCondition(g, ctx, orphan, common.TypeReady)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonDependencyNotFound))
		g.Expect(c.Message).To(ContainSubstring("ghosts.nowhere.example.org/v1alpha1 (needed by stacks/orphan) is not installed"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(framework.Condition(x.Status.Conditions, stacksv1.TypeInstalled).Status).To(Equal(metav1.ConditionUnknown))
	g.Expect(crdExists(ctx, "xs.cycle.example.org")).To(BeFalse(), "nothing of a cycle is installed")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "cycle-y"}, &stacksv1.ClusterStackInstall{})).NotTo(Succeed())

	By(t, "one event per problem, no hot loop")
	time.Sleep(3 * time.Second)
	events, err := env.Events(ctx, x)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(HaveLen(1))
	g.Expect(events[0].Reason).To(Equal(stacksv1.ReasonDependencyCycle))
	g.Expect(events[0].Count).To(BeNumerically("<=", 1))

	g.Expect(env.Client.Delete(ctx, x)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, orphan)).To(Succeed())
	waitGone(g, ctx, x, orphan)
}

// evilImage is a hand-made package image whose single layer holds the given entries.
func evilImage(t *testing.T, host, repo string, entries ...*tar.Header) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(make([]byte, h.Size)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := stackpkg.Ref(host, repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := stackpkg.Push(context.Background(), ref, img); err != nil {
		t.Fatal(err)
	}
}

func TestStackSafety(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	host := stackRegistry(t)
	appYAML := &tar.Header{Name: ".registry/app.yaml", Typeflag: tar.TypeReg, Size: 0, Mode: 0o644}
	evilImage(t, host, "evil/traversal:v1", appYAML, &tar.Header{Name: ".registry/../../../../tmp/owned", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644})
	evilImage(t, host, "evil/symlink:v1", appYAML, &tar.Header{Name: ".registry/install.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"})
	evilImage(t, host, "evil/huge:v1", appYAML, &tar.Header{Name: ".registry/readme.md", Typeflag: tar.TypeReg, Size: 5 << 20, Mode: 0o644})
	pushStacks(t, host, map[string]string{"collide": "stacks/collide:v1", "tfdb": "stacks/tfdb:v1"})
	startStackManager(t, host)

	By(t, "a module ConfigMap that exists but is not the stack's is refused, and uninstall leaves it alone")
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tfdb-module"}, Data: map[string]string{"main.tf": "# theirs"}}
	g.Expect(env.Client.Create(ctx, foreign)).To(Succeed())
	tf := clusterInstall("tfdb-conflict", "stacks/tfdb:v1", "")
	tf.Spec.AllowTerraform = true // the admin allows its ModuleClass; the ConfigMap still conflicts
	g.Expect(env.Client.Create(ctx, tf)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, tf, stacksv1.TypeInstalled)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonConflict))
		g.Expect(c.Message).To(ContainSubstring("ConfigMap tfdb-module already exists and is owned by no stack"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, tf)).To(Succeed())
	waitGone(g, ctx, tf, &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tfdb-conflict"}})
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), foreign)).To(Succeed())
	g.Expect(foreign.Data["main.tf"]).To(Equal("# theirs"))
	g.Expect(env.Client.Delete(ctx, foreign)).To(Succeed())

	By(t, "a CRD that exists but is not the stack's is refused and left alone")
	theirs := &apiextensionsv1.CustomResourceDefinition{}
	raw, err := os.ReadFile("testdata/stacks/collide/.registry/resources/collide.crd.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	files := stackpkg.Files{".registry/app.yaml": []byte("title: t"), ".registry/resources/c.crd.yaml": raw}
	p, err := stackpkg.Parse(files)
	g.Expect(err).NotTo(HaveOccurred())
	theirs.ObjectMeta = metav1.ObjectMeta{Name: p.CRDs[0].Name}
	theirs.Spec = p.CRDs[0].Spec
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	collide := clusterInstall("collide", "stacks/collide:v1", "")
	g.Expect(env.Client.Create(ctx, collide)).To(Succeed())

	installs := map[string]*stacksv1.ClusterStackInstall{}
	for _, n := range []string{"traversal", "symlink", "huge"} {
		installs[n] = clusterInstall("evil-"+n, "evil/"+n+":v1", "")
		g.Expect(env.Client.Create(ctx, installs[n])).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, collide, stacksv1.TypeInstalled)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonConflict))
		g.Expect(c.Message).To(ContainSubstring("CustomResourceDefinition collides.safety.example.org already exists and is owned by no stack"))
		for n, want := range map[string]string{"traversal": "leaves the archive", "symlink": "is a link or special file", "huge": "over the 4194304 byte limit"} {
			c := installCondition(g, ctx, installs[n], stacksv1.TypeUnpacked)
			g.Expect(c.Reason).To(Equal(stacksv1.ReasonUnsafePackage), n)
			g.Expect(c.Message).To(ContainSubstring(want), n)
		}
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(getCRD(g, ctx, theirs.Name).Annotations).NotTo(HaveKey(stacksv1.AnnotationOwner))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "collide"}, &stacksv1.Stack{})).NotTo(Succeed())
	_, err = os.Stat("/tmp/owned")
	g.Expect(os.IsNotExist(err)).To(BeTrue())

	By(t, "uninstalling a refused install leaves the foreign CRD in place")
	g.Expect(env.Client.Delete(ctx, collide)).To(Succeed())
	for _, in := range installs {
		g.Expect(env.Client.Delete(ctx, in)).To(Succeed())
	}
	waitGone(g, ctx, collide, installs["traversal"], installs["symlink"], installs["huge"])
	g.Expect(crdExists(ctx, theirs.Name)).To(BeTrue())
	g.Expect(env.Client.Delete(ctx, theirs)).To(Succeed())
}

func TestStackDirect(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	startStackManager(t, "")

	By(t, "without a default registry, a package without a host is a condition")
	nowhere := clusterInstall("nowhere", "stacks/gamma:v1", "")
	g.Expect(env.Client.Create(ctx, nowhere)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, nowhere, stacksv1.TypeResolved)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonNoRegistry))
		g.Expect(c.Message).To(ContainSubstring("start the manager with --stack-registry"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, nowhere)).To(Succeed())
	waitGone(g, ctx, nowhere)

	By(t, "a Stack written by hand gets its ServiceAccount, ClusterRole and Deployment")
	s := &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "handmade"}}
	s.Spec.Title = "Hand made"
	s.Spec.PermissionScope = stacksv1.PermissionScopeCluster
	s.Spec.CRDs.DependsOn = stacksv1.CRDList{"*.example.org/v1"}
	s.Spec.Controller.Deployment = &stacksv1.ControllerDeployment{Name: "handmade", Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "handmade"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "handmade"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.org/handmade:v1"}}}},
	}}
	g.Expect(env.Client.Create(ctx, s)).To(Succeed())
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "handmade"}}
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "stacks.terraplane.io:" + adminNS + ":handmade"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(framework.Condition(s.Status.Conditions, common.TypeReady).Reason).To(Equal(stacksv1.ReasonControllerDeployed))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal("handmade"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cr), cr)).To(Succeed())
		g.Expect(cr.Rules[0]).To(Equal(rbacv1.PolicyRule{APIGroups: []string{"example.org"}, Resources: []string{"*"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}}))
	}).WithTimeout(stackTimeout).Should(Succeed())

	By(t, "renaming the controller replaces its Deployment")
	g.Expect(updateLatest(ctx, s, func() {
		s.Spec.Controller.Deployment.Name = "handmade-v2"
	})).To(Succeed())
	dep2 := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "handmade-v2"}}
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(dep2), dep2) }).WithTimeout(stackTimeout).Should(Succeed())
	waitGone(g, ctx, dep)

	By(t, "a Stack whose CRDs cannot become RBAC: Ready=False and one event")
	bad := &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "bad"}}
	bad.Spec.CRDs.Owned = stacksv1.CRDList{"nonsense"}
	g.Expect(env.Client.Create(ctx, bad)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
		ready := framework.Condition(bad.Status.Conditions, common.TypeReady)
		g.Expect(ready.Reason).To(Equal(stacksv1.ReasonInvalidStack))
		g.Expect(ready.Message).To(ContainSubstring(`"nonsense" is not plural.group/version`))
	}).WithTimeout(stackTimeout).Should(Succeed())
	time.Sleep(2 * time.Second)
	events, err := env.Events(ctx, bad)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(HaveLen(1))
	g.Expect(events[0].Count).To(BeNumerically("<=", 1))

	g.Expect(env.Client.Delete(ctx, s)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, bad)).To(Succeed())
	waitGone(g, ctx, s, bad, dep2, cr, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "handmade"}})
}

func TestStackTerraformModule(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-stack-app"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	host := stackRegistry(t)
	pushStacks(t, host, map[string]string{"tfdb": "stacks/tfdb:v1"})
	startStackManager(t, host)

	By(t, "a Terraform-module stack ships a ModuleClass, code that runs for claims: refused until the admin allows it")
	in := clusterInstall("tfdb", "stacks/tfdb:v1", "")
	g.Expect(env.Client.Create(ctx, in)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced := installCondition(g, ctx, in, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal(common.ReasonTerraformNotAllowed), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring("spec.allowTerraform"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "tfdb"}, &terraformv1.ModuleClass{})).NotTo(Succeed(), "nothing installed")

	By(t, "allowed, installing it applies its module, ModuleClass and portable class; no controller")
	g.Expect(updateLatest(ctx, in, func() { in.Spec.AllowTerraform = true })).To(Succeed())
	waitInstallReady(g, ctx, in)
	g.Expect(in.Status.InstalledObjects).To(ConsistOf(
		stacksv1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: adminNS, Name: "tfdb-module"},
		stacksv1.ObjectReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Namespace: adminNS, Name: "tfdb"},
		stacksv1.ObjectReference{APIVersion: databasev1.GroupVersion.String(), Kind: "PostgreSQLInstanceClass", Namespace: appNS, Name: "tfdb"},
	))
	s := &stacksv1.Stack{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: "tfdb"}, s)).To(Succeed())
	g.Expect(framework.Condition(s.Status.Conditions, common.TypeReady).Reason).To(Equal(stacksv1.ReasonNoController))
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tfdb"}}
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, class).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(stackTimeout).Should(Succeed())

	By(t, "a claim of its kind becomes Bound through real terraform")
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "orders"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "tfdb"}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "orders-db"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitClaimReady(g, ctx, claim)
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "orders-db"}, secret)).To(Succeed())
	g.Expect(string(secret.Data["endpoint"])).To(Equal("orders.gold.db.internal"))
	g.Expect(string(secret.Data["port"])).To(Equal("5432"))

	By(t, "uninstall removes the classes but keeps the module while a Module uses it")
	mod := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: claim.Spec.ResourceRef.Name}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tfdb-module"}}
	g.Expect(env.Client.Delete(ctx, in)).To(Succeed())
	waitGone(g, ctx, in, s, class, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "tfdb"}})
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
	g.Expect(cm.Annotations).To(HaveKeyWithValue(stacksv1.AnnotationKeptFrom, "ClusterStackInstall/tfdb"))
	g.Expect(cm.Annotations).NotTo(HaveKey(stacksv1.AnnotationOwner))

	By(t, "the claim's resources can still be destroyed")
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	waitGone(g, ctx, claim, mod)
	g.Expect(env.Client.Delete(ctx, cm)).To(Succeed())
}

func TestStackPullSecret(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-stack-auth"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	host := authRegistry(t, "stacker", "s3cret")
	files, err := stackpkg.ReadDir("testdata/stacks/epsilon", stackpkg.DefaultLimits)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = stackpkg.Publish(ctx, host, "stacks/epsilon:v1", files, remote.WithAuth(&authn.Basic{Username: "stacker", Password: "s3cret"}))
	g.Expect(err).NotTo(HaveOccurred())
	// Problems are retried only every 10 minutes: what follows a fix is the manager's watches at work.
	mgr, err := env.StartManager(t.TempDir(), app.Options{StackRegistry: host, UserErrorRetry: 10 * time.Minute})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = mgr.Stop() })

	By(t, "without credentials the registry refuses, and a missing pull secret is named")
	in := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}}
	in.Spec.Package = "stacks/epsilon:v1"
	g.Expect(env.Client.Create(ctx, in)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, in, stacksv1.TypeUnpacked)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonRegistryUnavailable))
		g.Expect(c.Message).To(ContainSubstring("401 Unauthorized"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Expect(updateLatest(ctx, in, func() { in.Spec.PullSecretName = "registry-creds" })).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := installCondition(g, ctx, in, stacksv1.TypeResolved)
		g.Expect(c.Reason).To(Equal(stacksv1.ReasonPullSecret))
		g.Expect(c.Message).To(Equal("pull secret " + ns + "/registry-creds does not exist"))
	}).WithTimeout(stackTimeout).Should(Succeed())

	By(t, "creating the dockerconfigjson pull secret makes the install succeed at once")
	g.Expect(env.Client.Create(ctx, dockerConfigSecret(ns, "registry-creds", host, "stacker", "s3cret"))).To(Succeed())
	waitInstallReady(g, ctx, in)
	g.Expect(env.Client.Delete(ctx, in)).To(Succeed())
	waitGone(g, ctx, in, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "notes.epsilon.example.org"}})
}

// TestStackClaimDefinition: a Terraform-module stack that ships a module, its ModuleClass,
// a ClaimDefinition generated from it and a default class of the defined kind is a
// complete platform API: once installed, a claim of the new kind is Bound through real
// terraform, and uninstalling removes the kind once its claims are gone.
func TestStackClaimDefinition(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-stack-queue"
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	host := stackRegistry(t)
	pushStacks(t, host, map[string]string{"queue": "stacks/queue:v1"})
	startStackManager(t, host)

	By(t, "installing the stack defines the Queue kind and its default class")
	in := clusterInstall("queue", "stacks/queue:v1", "")
	in.Spec.AllowTerraform = true
	g.Expect(env.Client.Create(ctx, in)).To(Succeed())
	waitInstallReady(g, ctx, in)
	g.Expect(in.Status.InstalledObjects).To(ContainElement(stacksv1.ObjectReference{APIVersion: "apiextensions.terraplane.io/v1alpha1",
		Kind: "ClaimDefinition", Name: "queues.messaging.e2e.example.org"}))

	By(t, "a Queue claim, naming no class, is Bound through real terraform")
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(schema.GroupVersionKind{Group: "messaging.e2e.example.org", Version: "v1alpha1", Kind: "Queue"})
	claim.SetNamespace(appNS)
	claim.SetName("orders")
	g.Expect(unstructured.SetNestedMap(claim.Object, map[string]any{
		"parameters": map[string]any{"name": "orders"}, "writeConnectionSecretToRef": map[string]any{"name": "orders-queue"}}, "spec")).To(Succeed())
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	secret := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "orders-queue"}, secret)).To(Succeed())
		g.Expect(string(secret.Data["endpoint"])).To(Equal("orders.7d.queue.internal"))
	}).WithTimeout(stackTimeout).Should(Succeed())

	By(t, "uninstalling removes the definition, and so the kind, once the claim is gone")
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	waitGone(g, ctx, claim)
	g.Expect(env.Client.Delete(ctx, in)).To(Succeed())
	waitGone(g, ctx, in, &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "queues.messaging.e2e.example.org"}})
	g.Eventually(func() bool { return crdExists(ctx, "queues.messaging.e2e.example.org") }).WithTimeout(stackTimeout).Should(BeFalse())
}
