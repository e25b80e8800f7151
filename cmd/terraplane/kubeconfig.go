package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeFlags are what every command that talks to a cluster takes: --kubeconfig and
// --context, read with kubectl's loading rules (--kubeconfig, else $KUBECONFIG, else
// ~/.kube/config, else the pod's in-cluster configuration).
type kubeFlags struct {
	kubeconfig string
	context    string
}

// bind registers --kubeconfig and --context on fs.
func (k *kubeFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&k.context, "context", "", "kubeconfig context to use (default: the kubeconfig's current context)")
}

// errNoKubeconfig is what a command says when it finds no cluster to talk to.
var errNoKubeconfig = errors.New("no kubeconfig found: pass --kubeconfig or set KUBECONFIG")

// clientConfig applies the loading rules and the context override.
func (k *kubeFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.context})
}

// restConfig is the cluster the flags name, with errors a user can act on.
func (k *kubeFlags) restConfig() (*rest.Config, error) {
	if k.kubeconfig != "" {
		if _, err := os.Stat(k.kubeconfig); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", k.kubeconfig, errors.Unwrap(err))
		}
	}
	cfg, err := k.clientConfig().ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, errNoKubeconfig
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// stateBackend is what terraform's kubernetes state backend should read so that state
// lives in the cluster the command talks to: the kubeconfig files (one path, or several
// joined as in $KUBECONFIG) and the context. The override (--state-kubeconfig) wins; no
// kubeconfig at all means in-cluster configuration (both empty). Nothing is written:
// the backend reads the same files, at the same context, as the command.
func (k *kubeFlags) stateBackend(override string) (kubeconfig, context string, err error) {
	if override != "" {
		p, err := filepath.Abs(override)
		return p, "", err
	}
	cc := k.clientConfig()
	raw, err := cc.RawConfig()
	if err != nil {
		return "", "", fmt.Errorf("kubeconfig: %w", err)
	}
	if len(raw.Contexts) == 0 {
		return "", "", nil // in-cluster
	}
	files := cc.ConfigAccess().GetLoadingPrecedence()
	if k.kubeconfig != "" {
		files = []string{k.kubeconfig}
	}
	var existing []string
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", "", err
		}
		existing = append(existing, abs)
	}
	return strings.Join(existing, string(os.PathListSeparator)), k.context, nil
}
