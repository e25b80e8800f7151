package argocd

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// unreachable is a cluster that does not answer (a resource.Unavailable, as
// remote.Unreachable is).
type unreachable struct{}

func (unreachable) Error() string             { return "cluster https://10.0.0.1 is unreachable" }
func (unreachable) UnavailableReason() string { return common.ReasonClusterUnreachable }

// moduleClass is a ModuleClass at generation gen, checked at generation checked (0:
// never) as its controller checks it: usable (problem ""), read but unusable (problem
// is Ready's reason: Stalled), or unreadable (err).
func moduleClass(gen, checked int64, problem string, err error) client.Object {
	c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: gen}}
	st := &c.Status
	switch {
	case checked == 0:
	case err != nil:
		st.ObservedGeneration = outcomes(&st.Conditions, 0, checked, resource.FromOutcome(resource.ReadyBecause("ModuleValid", "")), err)
	case problem != "":
		resource.SetCondition(&st.Conditions, checked, common.TypeSynced, metav1.ConditionTrue, "ModuleRead", "")
		resource.NotReady(problem, "inputs[0] names no variable").Set(&st.Conditions, checked)
		resource.MarkStalled(&st.Conditions, &st.ObservedGeneration, checked, problem, "inputs[0] names no variable")
	default:
		resource.SetCondition(&st.Conditions, checked, common.TypeSynced, metav1.ConditionTrue, "ModuleRead", "")
		resource.ReadyBecause("ModuleValid", "").Set(&st.Conditions, checked)
		resource.SetProgress(&st.Conditions, &st.ObservedGeneration, checked, true)
	}
	return c
}

// rolling is class with its rollout's condition, RolloutPaused, as the revision
// controller writes it.
func rolling(class client.Object, s metav1.ConditionStatus, reason string) client.Object {
	conds := class.(interface{ GetClassConditions() *[]metav1.Condition }).GetClassConditions()
	resource.SetCondition(conds, class.GetGeneration(), common.TypeRolloutPaused, s, reason, "revision c-1a2b runs on 1 of 4 resources")
	return class
}

// s3Class is a bundled class, whose only condition is its rollout's.
func s3Class() client.Object {
	return &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: 1}}
}

// served is the Ready rule of the kinds whose reconcile observes what they stand for.
func served(reason string) resource.ReadyRule {
	return resource.FromOutcome(resource.ReadyBecause(reason, ""))
}

// definition is a ClaimDefinition at generation gen after errs (nil: served), its
// generation 1 served first when gen is 2.
func definition(gen int64, errs ...error) client.Object {
	d := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: gen}}
	if len(errs) == 0 {
		errs = []error{nil}
	}
	if gen > 1 {
		d.Status.ObservedGeneration = outcomes(&d.Status.Conditions, 0, 1, served("Served"), nil)
	}
	d.Status.ObservedGeneration = outcomes(&d.Status.Conditions, d.Status.ObservedGeneration, gen, served("Served"), errs...)
	return d
}

// kubeProviderConfig is a kubernetes ProviderConfig at generation 1 after err.
func kubeProviderConfig(err error) client.Object {
	p := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 1}}
	p.Status.ObservedGeneration = outcomes(&p.Status.Conditions, 0, 1, served(common.ReasonReachable), err)
	return p
}

// stackInstall is a StackInstall at generation 1 after err.
func stackInstall(err error) client.Object {
	s := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", Generation: 1}}
	s.Status.ObservedGeneration = outcomes(&s.Status.Conditions, 0, 1, served("Installed"), err)
	return s
}

// application is a KubernetesApplication at generation 1 in state, its own reconcile
// succeeded, as the application controller writes it.
func application(state workloadv1.ApplicationState) client.Object {
	a := &workloadv1.KubernetesApplication{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Generation: 1}}
	st := &a.Status
	st.State = state
	ready := metav1.ConditionFalse
	if state == workloadv1.ApplicationStateSubmitted {
		ready = metav1.ConditionTrue
	}
	resource.SetCondition(&st.Conditions, 1, common.TypeReady, ready, string(state), "0 of 1 resources submitted")
	resource.SetCondition(&st.Conditions, 1, common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess, "")
	if state == workloadv1.ApplicationStateFailed {
		resource.MarkStalled(&st.Conditions, &st.ObservedGeneration, 1, string(state), "its resources failed")
	} else {
		resource.SetProgress(&st.Conditions, &st.ObservedGeneration, 1, ready == metav1.ConditionTrue)
	}
	return a
}

// applicationResource is a KubernetesApplicationResource at generation 1 after err.
func applicationResource(err error) client.Object {
	r := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", Generation: 1}}
	r.Status.ObservedGeneration = outcomes(&r.Status.Conditions, 0, 1, served("Submitted"), err)
	return r
}

// TestHealthOfOtherKinds: what Argo CD (ready.lua) and kstatus read of the kinds that are
// neither claims nor managed resources, in each state, their conditions (Reconciling and
// Stalled included) made as their controllers make them.
func TestHealthOfOtherKinds(t *testing.T) {
	healthy := views{"Healthy", status.CurrentStatus}
	progressing := views{"Progressing", status.InProgressStatus}
	failed := views{"Degraded", status.FailedStatus}
	retrying := views{"Degraded", status.InProgressStatus}
	invalidSchema := resource.UserErrorf("InvalidSchema", "spec.schema is not an OpenAPI v3 schema")
	for _, tc := range []struct {
		name string
		obj  client.Object
		want views
	}{
		{"ModuleClass: valid", moduleClass(1, 1, "", nil), healthy},
		{"ModuleClass: an edit not checked yet", moduleClass(2, 1, "", nil), progressing},
		{"ModuleClass: not checked yet", moduleClass(1, 0, "", nil), views{"Progressing", status.CurrentStatus}}, // kstatus cannot tell without a status
		{"ModuleClass: an input mapping names no variable", moduleClass(1, 1, "InvalidMapping", nil), failed},
		{"ModuleClass: an edit mapping no variable", moduleClass(2, 2, "InvalidMapping", nil), failed},
		{"ModuleClass: its source does not exist", moduleClass(1, 1, "", resource.UserErrorf("SourceNotFound", "no ConfigMap m")), failed},
		{"ModuleClass: its repository does not answer, retried", moduleClass(1, 1, "", errTransient), retrying},
		{"ModuleClass: being deleted", deleting(moduleClass(1, 1, "", nil)), views{"Progressing", status.TerminatingStatus}},
		{"ModuleClass: valid, its rollout paused on a failure", rolling(moduleClass(1, 1, "", nil), metav1.ConditionTrue, common.ReasonRolloutFailed),
			views{"Degraded", status.CurrentStatus}},
		{"ModuleClass: unusable, its rollout complete", rolling(moduleClass(1, 1, "InvalidMapping", nil), metav1.ConditionFalse, common.ReasonRolloutComplete), failed},
		{"S3BucketClass: its rollout complete", rolling(s3Class(), metav1.ConditionFalse, common.ReasonRolloutComplete), healthy},
		{"S3BucketClass: its rollout under way", rolling(s3Class(), metav1.ConditionFalse, common.ReasonRolloutProgressing), views{"Progressing", status.CurrentStatus}},
		{"S3BucketClass: its rollout paused on a failure", rolling(s3Class(), metav1.ConditionTrue, common.ReasonRolloutFailed), views{"Degraded", status.CurrentStatus}},
		{"S3BucketClass: its rollout paused on request", rolling(s3Class(), metav1.ConditionTrue, common.ReasonRolloutPauseRequested), views{"Suspended", status.CurrentStatus}},
		{"ClaimDefinition: served", definition(1), healthy},
		{"ClaimDefinition: an edit served", definition(2), healthy},
		{"ClaimDefinition: waiting for its CRDs", definition(1, resource.Waitf("WaitingForCRD", "waiting for CustomResourceDefinition x")), progressing},
		{"ClaimDefinition: an invalid schema", definition(1, invalidSchema), failed},
		{"ClaimDefinition: an edit that would break claims", definition(2, resource.UserErrorf("BreakingChange", "would break 2 claims")), failed},
		{"ClaimDefinition: failing, retried", definition(1, errTransient), retrying},
		{"ProviderConfig: its cluster answers", kubeProviderConfig(nil), healthy},
		{"ProviderConfig: its kubeconfig refused", kubeProviderConfig(resource.UserErrorf(common.ReasonUnsafeKubeconfig, "exec is not allowed")), failed},
		{"ProviderConfig: its cluster unreachable", kubeProviderConfig(unreachable{}), failed},
		{"ProviderConfig: failing, retried", kubeProviderConfig(errTransient), retrying},
		{"Provider: in use", withConditions(&awsv1.Provider{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 1}},
			func(p *awsv1.Provider) {
				p.Status.Conditions = []metav1.Condition{cond(common.TypeInUse, metav1.ConditionTrue, "InUse", "used by S3Bucket b")}
			}), healthy},
		{"StackInstall: installed", stackInstall(nil), healthy},
		{"StackInstall: waiting for its dependencies", stackInstall(resource.Waitf("WaitingForDependencies", "stack b is not ready")), progressing},
		{"StackInstall: its package not found", stackInstall(resource.UserErrorf("PackageNotFound", "no such tag")), failed},
		{"StackInstall: its registry does not answer, retried", stackInstall(errTransient), retrying},
		{"KubernetesApplication: submitted", application(workloadv1.ApplicationStateSubmitted), healthy},
		{"KubernetesApplication: scheduled, being submitted", application(workloadv1.ApplicationStateScheduled), progressing},
		{"KubernetesApplication: its resources failed", application(workloadv1.ApplicationStateFailed), failed},
		{"KubernetesApplicationResource: submitted", applicationResource(nil), healthy},
		{"KubernetesApplicationResource: waiting for its namespace", applicationResource(resource.Waitf("WaitingForNamespace", "namespace x does not exist yet")), progressing},
		{"KubernetesApplicationResource: refused by its cluster", applicationResource(resource.UserErrorf("RemoteRejected", "cluster refused it")), failed},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHealth(t, tc.obj, tc.want) })
	}
}
