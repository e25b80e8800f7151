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
	var cfg *rest.Config
	var err error
	if kubeconfig == "" {
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("state backend: no state kubeconfig and not in a pod: %w", err)
		}
	} else {
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(kubeconfig)}
		if cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig(); err != nil {
			return nil, fmt.Errorf("state backend kubeconfig: %w", err)
		}
	}
	return backendproxy.Start(cfg, dir)
}
