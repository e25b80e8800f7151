package claimdefinition

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/registry"
)

// Server serves the kinds the stack manager defined: once a ClaimDefinition is
// Established it registers the kind and starts its claim reconciler. It only reads
// ClaimDefinitions; it writes neither them nor CRDs.
type Server struct {
	client client.Client
	reg    *registry.Registry
	server KindServer
}

// SetupServer registers the controller's side of ClaimDefinitions (the stack manager runs
// SetupDefiner).
func SetupServer(mgr ctrl.Manager, reg *registry.Registry, server KindServer) error {
	s := &Server{client: mgr.GetClient(), reg: reg, server: server}
	return ctrl.NewControllerManagedBy(mgr).Named("claimdefinition-server").For(&apiextv1.ClaimDefinition{}).Complete(s)
}

// Reconcile serves the definition's kind once its CRDs are Established. A kind that
// clashes with one compiled in is left alone: the definer says so in the definition's
// status.
func (s *Server) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	def := &apiextv1.ClaimDefinition{}
	if err := s.client.Get(ctx, req.NamespacedName, def); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !meta.IsStatusConditionTrue(def.Status.Conditions, apiextv1.TypeEstablished) {
		return ctrl.Result{}, nil
	}
	c := &run{def: def}
	kind, ok := s.reg.Claim(c.gvk())
	if !ok {
		s.reg.AddClaim(kinds.DefinedClaim(c.gvk(), c.classGVK()))
		kind, _ = s.reg.Claim(c.gvk())
	}
	if !kind.Defined || kind.ClassGVK != c.classGVK() {
		ctrl.LoggerFrom(ctx).Info("claim kind already served; not serving the definition's", "kind", c.gvk(), "class", kind.ClassGVK.Kind)
		return ctrl.Result{}, nil
	}
	if err := s.server.Serve(kind); err != nil {
		return ctrl.Result{}, fmt.Errorf("serve %s: %w", c.gvk().Kind, err)
	}
	return ctrl.Result{}, nil
}
