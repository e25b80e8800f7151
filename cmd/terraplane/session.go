package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/kref"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/trace"
)

// defaultAdminNamespace is where managed resources, Providers and non-portable classes
// live unless --admin-namespace says otherwise.
const defaultAdminNamespace = "terraplane-system"

// nsFlags are -n and --admin-namespace, for commands that name resources in a cluster.
type nsFlags struct {
	namespace string
	admin     string
}

// namespaceHelp says how -n defaults, in every command's help.
const namespaceHelp = "namespace (default: the kubeconfig context's namespace; for managed resources, Providers and non-portable classes, --admin-namespace)"

// bind registers -n and --admin-namespace on fs.
func (n *nsFlags) bind(fs *pflag.FlagSet) {
	fs.StringVarP(&n.namespace, "namespace", "n", "", namespaceHelp)
	fs.StringVar(&n.admin, "admin-namespace", defaultAdminNamespace, "the admin namespace: where managed resources, Providers and non-portable classes are looked for without -n")
}

// session is one command's connection to the cluster: a client that maps the names a
// user types through discovery (short names included), and the namespaces to default to.
type session struct {
	client client.Client
	disco  *kref.Discovery
	reg    *registry.Registry
	ns     kref.Namespaces
}

// connect opens a session on the cluster the kube flags name.
func (k *kubeFlags) connect(n *nsFlags, warn io.Writer) (*session, error) {
	cfg, err := k.restConfig()
	if err != nil {
		return nil, err
	}
	contextNS, _, err := k.clientConfig().Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	disco, err := kref.Discover(cfg, warn)
	if err != nil {
		return nil, err
	}
	reg := kinds.NewRegistry(nil)
	c, err := client.New(cfg, client.Options{Scheme: reg.Scheme(), Mapper: disco.Mapper})
	if err != nil {
		return nil, err
	}
	ns := kref.Namespaces{Context: contextNS}
	if n != nil {
		ns.Explicit, ns.Admin = n.namespace, n.admin
	}
	return &session{client: c, disco: disco, reg: reg, ns: ns}, nil
}

// target is a resource named on the command line.
type target struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

// String is the resource as KIND/NAME.
func (t target) String() string { return t.gvk.Kind + "/" + t.name }

// resolve reads KIND/NAME (or KIND NAME) from args: the kind through discovery, the
// namespace from -n, else the admin namespace for admin kinds, else the context's.
func (s *session) resolve(args []string) (target, error) {
	ref, err := kref.Args(args)
	if err != nil {
		return target{}, err
	}
	kind, name, err := kref.Split(ref)
	if err != nil {
		return target{}, err
	}
	m, err := kref.Mapping(s.disco.Mapper, kind)
	if err != nil {
		return target{}, err
	}
	t := target{gvk: typedVersion(s.client.Scheme(), m.GroupVersionKind), name: name}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		_, nonPortable := s.reg.ManagedForClass(t.gvk)
		t.namespace = s.ns.For(kref.AdminKind(s.disco.Categories(t.gvk), nonPortable))
	}
	return t, nil
}

// typedVersion is gvk at the version the CLI's own types are of, where the server
// prefers another it also serves (Module at v1beta1, say): the registry and the typed
// client know the kind by that version. A kind without types keeps the server's.
func typedVersion(scheme *runtime.Scheme, gvk schema.GroupVersionKind) schema.GroupVersionKind {
	if scheme.Recognizes(gvk) {
		return gvk
	}
	if versions := scheme.VersionsForGroupKind(gvk.GroupKind()); len(versions) > 0 {
		return versions[0].WithKind(gvk.Kind)
	}
	return gvk
}

// managed reads the Terraform managed resource t names.
func (s *session) managed(ctx context.Context, t target) (resource.Managed, error) {
	kind, ok := s.reg.Managed(t.gvk)
	if !ok || kind.Terraform == nil {
		return nil, fmt.Errorf("%s is not a managed kind that Terraform runs (S3Bucket, Module, ...)", t.gvk.GroupKind())
	}
	mg := kind.New()
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: t.namespace, Name: t.name}, mg); err != nil {
		return nil, fmt.Errorf("get %s in namespace %s: %w", t, t.namespace, err)
	}
	mg.GetObjectKind().SetGroupVersionKind(t.gvk)
	return mg, nil
}

// kindInfo is what trace needs to know about kinds, from this session.
func (s *session) kindInfo() *trace.KindInfo {
	return &trace.KindInfo{Registry: s.reg, Reader: s.client, Categories: s.disco.Categories, GroupKinds: s.disco.Kinds}
}
