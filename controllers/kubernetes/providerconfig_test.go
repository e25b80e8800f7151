package kubernetes

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
)

// TestProviderConfigHealth: a ProviderConfig is Ready while its cluster answers; any
// failure is Ready=False and looked at again as an unreachable cluster is. As for
// managed resources, one that cannot be used until someone acts (a cluster that does
// not answer, credentials missing or refused) is Stalled; a failure that may pass is
// Reconciling.
func TestProviderConfigHealth(t *testing.T) {
	srv := apiServer(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	elsewhere := providerConfig()
	elsewhere.Spec.CredentialsSecretRef.Namespace = "kube-system"
	type result struct {
		Ready, Reason, Message, Endpoint string
		Requeue                          time.Duration
		Progress                         string // Stalled/<reason>, Reconciling or Applied
	}
	opts := Options{UnreachableRetry: 7 * time.Second, UserErrorRetry: 9 * time.Second}.WithDefaults()
	cases := map[string]struct {
		local       []client.Object
		secretsFail bool // reading a Secret fails
		want        result
	}{
		"it answers": {local: []client.Object{providerConfig(), credentials(srv.URL)},
			want: result{"True", common.ReasonReachable, "Kubernetes v1.31.2", srv.URL, providerConfigResync, "Applied"}},
		"it does not answer": {local: []client.Object{providerConfig(), credentials(closed.URL)},
			want: result{"False", common.ReasonClusterUnreachable, "", closed.URL, opts.UnreachableRetry, "Stalled/" + common.ReasonClusterUnreachable}},
		"its credentials are missing": {local: []client.Object{providerConfig()},
			want: result{"False", "CredentialsNotFound", "", "", opts.UserErrorRetry, "Stalled/CredentialsNotFound"}},
		"its credentials are elsewhere": {local: []client.Object{elsewhere, credentials(srv.URL)},
			want: result{"False", "ReferenceNotAllowed", "", "", opts.UserErrorRetry, "Stalled/ReferenceNotAllowed"}},
		"its credentials cannot be read": {local: []client.Object{providerConfig(), credentials(srv.URL)}, secretsFail: true,
			want: result{"False", common.ReasonReconcileError, "", "", opts.UnreachableRetry, "Reconciling"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl, c := newClusters(tc.local...)
			if tc.secretsFail {
				cl.targets.Cache = remote.NewCache(interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{Get: failSecrets}), &rest.Config{}, localScheme())
			}
			r := &ProviderConfigReconciler{client: c, targets: cl.targets, opts: opts}
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: pcName}})
			if err != nil {
				t.Fatal(err)
			}
			pc := &kubernetesv1.ProviderConfig{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: pcName}, pc); err != nil {
				t.Fatal(err)
			}
			got := result{Endpoint: pc.Status.Endpoint, Requeue: res.RequeueAfter}
			switch conds := pc.Status.Conditions; {
			case meta.IsStatusConditionTrue(conds, common.TypeStalled):
				got.Progress = "Stalled/" + meta.FindStatusCondition(conds, common.TypeStalled).Reason
			case meta.IsStatusConditionTrue(conds, common.TypeReconciling):
				got.Progress = "Reconciling"
			case pc.Status.ObservedGeneration == pc.Generation:
				got.Progress = "Applied"
			}
			if cond := meta.FindStatusCondition(pc.Status.Conditions, common.TypeReady); cond != nil {
				got.Ready, got.Reason = string(cond.Status), cond.Reason
				if cond.Status == "True" {
					got.Message = cond.Message
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// failSecrets fails every read of a Secret.
func failSecrets(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		return errors.New("etcd is down")
	}
	return c.Get(ctx, key, obj, opts...)
}
