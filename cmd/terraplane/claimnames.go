package main

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"terraplane.io/terraplane/internal/claimschema"
	"terraplane.io/terraplane/internal/kinds"
)

// discoveryTimeout bounds the name check against a cluster.
const discoveryTimeout = 5 * time.Second

// checkNames refuses a kind, plural or class kind that another group serves already:
// one of Terraplane's or Kubernetes' own, or, when a cluster is reachable, one its API
// server serves. Unless --allow-name-conflict, a conflict is an error naming them.
func (o *claimOptions) checkNames(cmd *cobra.Command) error {
	served := claimschema.Served(knownKinds())
	if fromCluster, err := o.clusterKinds(); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: names checked against Terraplane's and Kubernetes' own kinds only (%v)\n", err)
	} else {
		served = append(served, fromCluster...)
	}
	conflicts := claimschema.NameConflicts(served, o.group, o.kind, o.plural, nil)
	conflicts = append(conflicts, claimschema.NameConflicts(served, o.group, o.kind+"Class", strings.ToLower(o.kind)+"classes", nil)...)
	if len(conflicts) == 0 {
		return nil
	}
	if o.allowNameConflict {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", strings.Join(conflicts, "; "))
		return nil
	}
	return fmt.Errorf("%s; choose another --kind (and --plural), or generate it anyway with --allow-name-conflict (then use the full name, kubectl get %s.%s)",
		strings.Join(conflicts, "; "), o.plural, o.group)
}

// knownKinds are the kinds Terraplane and Kubernetes serve, from the scheme: the types
// with object metadata (not the options and status types every group registers).
func knownKinds() map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for gvk, t := range kinds.NewScheme().AllKnownTypes() {
		if _, ok := t.FieldByName("ObjectMeta"); ok && t.Kind() == reflect.Struct {
			out[gvk] = true
		}
	}
	return out
}

// clusterKinds are the kinds the cluster the kubeconfig names serves.
func (o *claimOptions) clusterKinds() ([]*metav1.APIResourceList, error) {
	cfg, err := o.kube.restConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = discoveryTimeout
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	_, lists, err := d.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovery at %s: %w", cfg.Host, err)
	}
	return lists, nil
}
