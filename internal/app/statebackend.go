package app

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"terraplane.io/terraplane/internal/backendproxy"
)

// stateBackend serves terraform's state backend, in dir, a proxy with the identity it
// would have had: the state kubeconfig (paths joined as in $KUBECONFIG) at its context,
// else the pod's ServiceAccount.
func stateBackend(kubeconfig, context, dir string) (*backendproxy.Proxy, error) {
	cfg, err := stateBackendConfig(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	return backendproxy.Start(cfg, dir)
}

// stateBackendConfig is the identity terraform's kubernetes state backend has with
// kubeconfig (paths joined as in $KUBECONFIG) at context; no kubeconfig means the pod's.
func stateBackendConfig(kubeconfig, context string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("state backend: no state kubeconfig and not in a pod: %w", err)
		}
		return cfg, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(kubeconfig)}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("state backend kubeconfig: %w", err)
	}
	return cfg, nil
}
