package planpolicy

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

var (
	evaluationsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "terraplane_policy_evaluations_total",
		Help: "Plan policy rules evaluated on plans, per managed kind, policy and rule.",
	}, []string{"kind", "policy", "rule"})
	denialsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "terraplane_policy_denials_total",
		Help: "Plans a plan policy rule denied (a failed Deny rule, or one that could not be evaluated), per managed kind, policy and rule.",
	}, []string{"kind", "policy", "rule"})
	approvalsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "terraplane_policy_approvals_required_total",
		Help: "Plans a plan policy's RequireApproval rule held for approval, per managed kind, policy and rule.",
	}, []string{"kind", "policy", "rule"})
	warningsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "terraplane_policy_warnings_total",
		Help: "Plans that failed a plan policy's Warn rule, per managed kind, policy and rule.",
	}, []string{"kind", "policy", "rule"})
)

// RegisterMetrics adds the policy counters to controller-runtime's registry; a second
// call (tests run several managers) is no error.
func RegisterMetrics() error {
	for _, c := range []prometheus.Collector{evaluationsTotal, denialsTotal, approvalsTotal, warningsTotal} {
		if err := metrics.Registry.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// Observe counts the results of one evaluation on a plan of a resource of kind.
func Observe(kind string, results []Result) {
	for _, r := range results {
		evaluationsTotal.WithLabelValues(kind, r.Policy, r.Rule).Inc()
		if r.Passed {
			continue
		}
		switch r.Enforcement {
		case policyv1.EnforcementDeny:
			denialsTotal.WithLabelValues(kind, r.Policy, r.Rule).Inc()
		case policyv1.EnforcementRequireApproval:
			approvalsTotal.WithLabelValues(kind, r.Policy, r.Rule).Inc()
		case policyv1.EnforcementWarn:
			warningsTotal.WithLabelValues(kind, r.Policy, r.Rule).Inc()
		}
	}
}
