package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// benchPolicies are the plan policies -policies installs, in this order: the examples of
// docs/policies.md that every benchmark plan passes, so that they cost what checking
// them costs (and, for the creates they match, a plan before the apply) and hold nothing
// back. Together they hold 10 rules, of each enforcement.
var benchPolicies = []policyv1.PlanPolicy{
	policy("buckets-not-public", []string{"aws_s3_bucket", "aws_s3_bucket_acl", "aws_s3_bucket_public_access_block"},
		rule("no-public-acl", policyv1.EnforcementDeny, `plan.resource_changes.all(rc, rc.type != 'aws_s3_bucket_acl' || rc.change.after == null ||
  !(rc.change.after.?acl.orValue('private') in ['public-read', 'public-read-write']))`),
		rule("public-access-blocked", policyv1.EnforcementDeny, `plan.resource_changes.all(rc, rc.type != 'aws_s3_bucket_public_access_block' || rc.change.after == null ||
  (rc.change.after.block_public_acls && rc.change.after.block_public_policy))`),
		rule("not-tagged-public", policyv1.EnforcementDeny, `plan.resource_changes.all(rc, rc.type != 'aws_s3_bucket' || rc.change.after == null ||
  rc.change.after.tags == null || rc.change.after.tags.?public.orValue('false') != 'true')`)),
	policy("destroy-limit", nil,
		rule("at-most-5", policyv1.EnforcementRequireApproval, `plan.resource_changes.filter(rc, 'delete' in rc.change.actions).size() <= 5`)),
	policy("no-eu", nil,
		rule("outside-eu", policyv1.EnforcementDeny, `plan.resource_changes.all(rc, rc.change.after == null ||
  !rc.change.after.?region.orValue('').startsWith('eu-') && !rc.change.after.?availability_zone.orValue('').startsWith('eu-'))`)),
	policy("bucket-names", []string{"aws_s3_bucket"},
		rule("short", policyv1.EnforcementDeny, `plan.resource_changes.all(rc, rc.change.after == null || rc.change.after.?bucket.orValue('').size() <= 63)`),
		rule("lower-case", policyv1.EnforcementDeny, `plan.resource_changes.all(rc, rc.change.after == null || rc.change.after.?bucket.orValue('').lowerAscii() == rc.change.after.?bucket.orValue(''))`),
		rule("not-reserved", policyv1.EnforcementDeny, `plan.resource_changes.all(rc, rc.change.after == null || !rc.change.after.?bucket.orValue('').startsWith('xn--'))`)),
	policy("versioning", []string{"aws_s3_bucket_versioning"},
		rule("one-configuration", policyv1.EnforcementWarn, `plan.resource_changes.all(rc, rc.change.after == null || rc.change.after.versioning_configuration.size() == 1)`),
		rule("known-status", policyv1.EnforcementWarn, `plan.resource_changes.all(rc, rc.change.after == null ||
  rc.change.after.versioning_configuration.all(v, v.status in ['Enabled', 'Suspended']))`)),
}

// installPolicies creates the first n of benchPolicies.
func (h *harness) installPolicies(ctx context.Context, n int) error {
	if n > len(benchPolicies) {
		return fmt.Errorf("-policies %d: the bench has %d policies", n, len(benchPolicies))
	}
	for i := range benchPolicies[:n] {
		p := benchPolicies[i].DeepCopy()
		if err := h.c.Create(ctx, p); err != nil {
			return fmt.Errorf("create plan policy %s: %w", p.Name, err)
		}
	}
	return nil
}

// policy is a PlanPolicy of the bench, named with a bench- prefix.
func policy(name string, types []string, rules ...policyv1.PolicyRule) policyv1.PlanPolicy {
	return policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bench-" + name},
		Spec: policyv1.PlanPolicySpec{Match: policyv1.PolicyMatch{ResourceTypes: types}, Rules: rules}}
}

// rule is a rule with a message naming it.
func rule(name string, e policyv1.Enforcement, expr string) policyv1.PolicyRule {
	return policyv1.PolicyRule{Name: name, Enforcement: e, Expression: expr, Message: "the plan fails " + name}
}
