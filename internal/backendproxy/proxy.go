package backendproxy

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"terraplane.io/terraplane/internal/servingcert"
)

// loopback is the address the proxy listens on.
var loopback = net.IPv4(127, 0, 0, 1)

// kubeconfigPattern names the file, in the directory Start is given, that reaches the
// proxy: one of its own, as a proxy that stops removes its file while another started
// on the same directory may serve already.
const kubeconfigPattern = ".state-backend-*.kubeconfig"

// Proxy forwards terraform's state backend requests to the API server with the identity
// of the configuration it was started with, narrowing state reads to a name.
type Proxy struct {
	token      string
	kubeconfig string
	server     *http.Server
	upstream   *httputil.ReverseProxy
	holds      holds
}

// Start serves a proxy on a loopback port in front of the API server cfg reaches, with
// cfg's identity, and writes into dir (mode 0600) the kubeconfig that reaches it, with a
// token of its own that only holders of that file know.
func Start(cfg *rest.Config, dir string) (*Proxy, error) {
	target, err := apiURL(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state backend proxy: %w", err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("state backend proxy transport: %w", err)
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	// terraform's client sends a token only over TLS: a certificate of the proxy's own
	caPEM, certPEM, keyPEM, err := servingcert.Generate([]string{loopback.String()})
	if err != nil {
		return nil, fmt.Errorf("state backend proxy certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("state backend proxy certificate: %w", err)
	}
	lis, err := tls.Listen("tcp", net.JoinHostPort(loopback.String(), "0"), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("state backend proxy listener: %w", err)
	}
	p := &Proxy{token: token}
	p.upstream = &httputil.ReverseProxy{
		Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:      transport,
		FlushInterval:  -1, // watches stream as they come
		ModifyResponse: p.keep,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "the API server could not be reached: "+err.Error(), http.StatusBadGateway)
		},
	}
	if err := p.writeKubeconfig(dir, "https://"+lis.Addr().String(), caPEM); err != nil {
		_ = lis.Close()
		return nil, err
	}
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(lis) }()
	return p, nil
}

// Kubeconfig is the path of the kubeconfig that reaches the proxy.
func (p *Proxy) Kubeconfig() string { return p.kubeconfig }

// Close stops serving and removes the kubeconfig.
func (p *Proxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.server.Shutdown(ctx)
	if rmErr := os.Remove(p.kubeconfig); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}

// ServeHTTP forwards a request that bears the proxy's token, without it, and with a
// state read narrowed to its Secret's name; it answers itself the reads of a held state
// it knows (Hold).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(given), []byte(p.token)) != 1 {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	r.Header.Del("Authorization")
	if r.Method == http.MethodGet {
		r.URL.RawQuery = narrow(r.URL.Path, r.URL.Query()).Encode()
	}
	r, answered := p.answer(w, r)
	if answered {
		return
	}
	p.upstream.ServeHTTP(w, r)
}

// writeKubeconfig writes the kubeconfig of the proxy at server, whose certificate ca
// signed, in a file of its own in dir.
func (p *Proxy) writeKubeconfig(dir, server string, ca []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["state"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["state"] = &clientcmdapi.AuthInfo{Token: p.token}
	cfg.Contexts["state"] = &clientcmdapi.Context{Cluster: "state", AuthInfo: "state"}
	cfg.CurrentContext = "state"
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("write the state backend's kubeconfig: %w", err)
	}
	f, err := os.CreateTemp(dir, kubeconfigPattern) // mode 0600
	if err != nil {
		return fmt.Errorf("write the state backend's kubeconfig: %w", err)
	}
	p.kubeconfig = f.Name()
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(p.kubeconfig)
		return fmt.Errorf("write the state backend's kubeconfig: %w", err)
	}
	return nil
}

// apiURL is the API server's base URL in cfg.
func apiURL(cfg *rest.Config) (*url.URL, error) {
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("state backend proxy: the API server's address %q: %v", cfg.Host, err)
	}
	return u, nil
}

// newToken is a random bearer token.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("state backend proxy token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
