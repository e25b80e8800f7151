package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/resource"
)

// Connection Secret keys (DESIGN.md §1), plus ca.crt of ServiceAccount token Secrets.
const (
	KeyKubeconfig = "kubeconfig"
	KeyEndpoint   = "endpoint"
	KeyClusterCA  = "clusterCA"
	KeyClientCert = "clientCert"
	KeyClientKey  = "clientKey"
	KeyToken      = "token"
	KeyUsername   = "username"
	KeyPassword   = "password"
	KeyServiceCA  = "ca.crt"
)

// DefaultTimeout bounds every request to a target cluster.
const DefaultTimeout = 10 * time.Second

// Cluster is a client to one target cluster.
type Cluster struct {
	// Client reads and writes any kind, even ones unknown to the control plane.
	Client client.Client
	// Host is the API server's address.
	Host   string
	config *rest.Config
}

// Ping asks the cluster for its version, reporting Unreachable when it does not answer.
func (c *Cluster) Ping() (string, error) {
	d, err := discovery.NewDiscoveryClientForConfig(c.config)
	if err != nil {
		return "", fmt.Errorf("build discovery client: %w", err)
	}
	v, err := d.ServerVersion()
	if err != nil {
		return "", Classify(c.Host, err)
	}
	return v.GitVersion, nil
}

type entry struct {
	version string // Secret UID/resourceVersion the client was built from
	cluster *Cluster
}

// Cache holds one Cluster per connection Secret.
type Cache struct {
	// AllowKubeconfigExec lets kubeconfigs run commands (exec, auth-provider) and read
	// files inside the controller; off, such kubeconfigs are refused (UnsafeKubeconfig).
	// Set it before the first call.
	AllowKubeconfigExec bool

	local   client.Client
	self    *rest.Config
	scheme  *runtime.Scheme
	timeout time.Duration
	mu      sync.Mutex
	entries map[types.NamespacedName]entry
}

// NewCache returns a cache that reads Secrets with local; self is the control cluster,
// reached by ServiceAccount token Secrets; scheme types the clients' objects.
func NewCache(local client.Client, self *rest.Config, scheme *runtime.Scheme) *Cache {
	return &Cache{local: local, self: self, scheme: scheme, timeout: DefaultTimeout, entries: map[types.NamespacedName]entry{}}
}

// Cluster returns the client for the cluster the Secret key names, rebuilding it when
// the Secret changed. A missing Secret or unusable contents are user errors.
func (c *Cache) Cluster(ctx context.Context, key types.NamespacedName) (*Cluster, error) {
	s := &corev1.Secret{}
	if err := c.local.Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			c.forget(key)
			return nil, resource.UserErrorf("CredentialsNotFound", "connection Secret %s does not exist", key)
		}
		return nil, fmt.Errorf("get connection secret %s: %w", key, err)
	}
	version := string(s.UID) + "/" + s.ResourceVersion
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok && e.version == version {
		return e.cluster, nil
	}
	cfg, err := c.restConfig(s)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = c.timeout
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme})
	if err != nil {
		return nil, fmt.Errorf("build client for %s: %w", cfg.Host, Classify(cfg.Host, err))
	}
	cluster := &Cluster{Client: cl, Host: cfg.Host, config: cfg}
	c.entries[key] = entry{version: version, cluster: cluster}
	return cluster, nil
}

// forget drops the client built from the Secret key, once the Secret is gone.
func (c *Cache) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

// restConfig reads a Secret in either format; messages name keys, never values.
func (c *Cache) restConfig(s *corev1.Secret) (*rest.Config, error) {
	d := s.Data
	if kc, ok := d[KeyKubeconfig]; ok {
		return kubeconfigRESTConfig(kc, s.Namespace, s.Name, c.AllowKubeconfigExec)
	}
	cfg := &rest.Config{
		Host:        string(d[KeyEndpoint]),
		BearerToken: string(d[KeyToken]),
		Username:    string(d[KeyUsername]),
		Password:    string(d[KeyPassword]),
		TLSClientConfig: rest.TLSClientConfig{
			CAData: first(d[KeyClusterCA], d[KeyServiceCA]), CertData: d[KeyClientCert], KeyData: d[KeyClientKey],
		},
	}
	if cfg.Host == "" && (s.Type == corev1.SecretTypeServiceAccountToken || len(d[KeyServiceCA]) > 0) {
		cfg.Host = c.self.Host // a ServiceAccount token of the control cluster itself
		if len(cfg.CAData) == 0 {
			cfg.CAData = c.self.CAData
		}
	}
	if cfg.Host == "" {
		return nil, resource.UserErrorf("InvalidCredentials", "Secret %s/%s has neither key %s nor key %s", s.Namespace, s.Name, KeyKubeconfig, KeyEndpoint)
	}
	if cfg.BearerToken == "" && cfg.Username == "" && len(cfg.CertData) == 0 {
		return nil, resource.UserErrorf("InvalidCredentials", "Secret %s/%s has no credentials: set %s, %s/%s, or %s/%s", s.Namespace, s.Name,
			KeyToken, KeyClientCert, KeyClientKey, KeyUsername, KeyPassword)
	}
	return cfg, nil
}

func first(vs ...[]byte) []byte {
	for _, v := range vs {
		if len(v) > 0 {
			return v
		}
	}
	return nil
}

// Unreachable is a target cluster that does not answer.
type Unreachable struct {
	// Host is the API server's address.
	Host string
	err  error
}

// Error names the host and the network failure.
func (u *Unreachable) Error() string {
	return fmt.Sprintf("cluster %s is unreachable: %v", u.Host, u.err)
}

// Unwrap returns the network failure.
func (u *Unreachable) Unwrap() error { return u.err }

// UnavailableReason makes an Unreachable a resource.Unavailable.
func (u *Unreachable) UnavailableReason() string { return common.ReasonClusterUnreachable }

// Classify marks network failures and timeouts talking to host as Unreachable.
func Classify(host string, err error) error {
	var ne net.Error
	var ue *url.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ne), errors.As(err, &ue), errors.Is(err, context.DeadlineExceeded),
		apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsServiceUnavailable(err):
		return &Unreachable{Host: host, err: err}
	}
	return err
}

// AsUnreachable reports whether err is (or wraps) an Unreachable.
func AsUnreachable(err error) (*Unreachable, bool) {
	var u *Unreachable
	ok := errors.As(err, &u)
	return u, ok
}
