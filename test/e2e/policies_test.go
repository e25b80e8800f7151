package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	tfengine "terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/test/framework"
)

// policiesNS is TestPlanPolicies' tenant namespace; its cluster-scoped policies match
// only it.
const policiesNS = "e2e-policies"

// The policies' rules, as docs/policies.md shows them.
const (
	notPublicRule = `plan.resource_changes.all(rc, rc.type != 'aws_s3_bucket' || rc.change.after == null ||
  rc.change.after.tags == null || rc.change.after.tags.?public.orValue('false') != 'true')`
	costCenterRule = `plan.resource_changes.all(rc, rc.change.after == null ||
  (rc.change.after.?tags.orValue(null) != null && 'cost-center' in rc.change.after.tags))`
	costCenterMessage = `'every resource needs a cost-center tag; missing on ' +
  plan.resource_changes.filter(rc, rc.change.after != null &&
    (rc.change.after.?tags.orValue(null) == null || !('cost-center' in rc.change.after.tags)))
    .map(rc, rc.address).join(', ')`
	noRecreateRule = `object.status.?terraform.?resources.orValue(0) == 0 ||
  plan.resource_changes.all(rc, !('create' in rc.change.actions))`
)

// bucketAddress is the bucket's address in an S3Bucket's plan.
const bucketAddress = "module.this.aws_s3_bucket.this"

// TestPlanPolicies checks plan policies end to end, on one controller: Bucket claims
// on the real aws provider against MinIO, and a terraform_data Module.
//   - "buckets must not be public": a claim for a bucket tagged public is denied
//     (PolicyDenied, on the claim too, with the rule's message); approving the denied
//     plan does not let it through; no bucket is made; an edit of the policy plans it
//     again at once.
//   - "cost-center tag required": a claim without the tag is denied, and applies once
//     its class adds the tag.
//   - a drift correction a policy denies is not applied: the drift is reported.
//   - a NamespacedPlanPolicy: a plan that destroys (replaces) the server waits for
//     approval (PolicyRequiresApproval) and applies once approved; an in-place change
//     is applied with a PolicyWarning event and a Warn line in the plan's status.
func TestPlanPolicies(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	class := setupPolicyBuckets(g, ctx)
	runs := &runLog{}
	mgr, err := env.StartManager(t.TempDir(), app.Options{DriftInterval: time.Hour, Engine: tfengine.Options{OnRun: runs.add}})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	for _, p := range bucketPolicies() {
		g.Expect(env.Client.Create(ctx, p)).To(Succeed())
		defer func() { _ = env.Client.Delete(ctx, p) }()
	}
	mc := adminS3(g)

	By(t, "a claim for a public bucket is denied with the rule's message, on the claim too; no bucket is made")
	public := framework.Bucket(policiesNS, "public", "", "")
	public.Spec.Tags = map[string]string{"public": "true", "cost-center": "cc-7"}
	g.Expect(env.Client.Create(ctx, public)).To(Succeed())
	denied := waitClaimDenied(g, ctx, public, "policy e2e-buckets-not-public rule not-tagged-public: buckets must not be public (at "+bucketAddress+")")
	mg := managedOf(g, ctx, public)
	g.Expect(mg.Status.Terraform.Plan.Policies).To(ContainElements(
		common.PolicyResult{Policy: "e2e-buckets-not-public", Rule: "not-tagged-public", Result: "Deny", Message: "buckets must not be public (at " + bucketAddress + ")"},
		common.PolicyResult{Policy: "e2e-cost-center", Rule: "tag-required", Result: "Pass"}))
	g.Expect(bucketExists(g, mc, mg.Spec.ForProvider.BucketName)).To(BeFalse())

	By(t, "a claim that passes every policy is checked inside its one apply: no plan first, the results in its status")
	checkCheckedCreate(t, g, ctx, runs, mc)

	By(t, "approving the denied plan does not let it through")
	plan := mg.Status.Terraform.Plan.ID
	g.Expect(denied).To(ContainSubstring("plan " + plan + " "))
	g.Expect(updateLatest(ctx, mg, func() { mg.Spec.ApprovedPlan = plan })).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		synced := framework.Condition(mg.Status.Conditions, common.TypeSynced)
		g.Expect(synced.ObservedGeneration).To(Equal(mg.Generation))
		g.Expect(synced.Reason).To(Equal(common.ReasonPolicyDenied), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring("approving it does not let it through"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(mg.Status.Terraform.Plan.ID).To(Equal(plan))
	g.Expect(mg.Status.Terraform.LastApply).To(BeNil(), "nothing was applied")
	g.Consistently(func() bool { return bucketExists(g, mc, mg.Spec.ForProvider.BucketName) }).WithTimeout(3 * time.Second).Should(BeFalse())

	By(t, "a claim without a cost-center tag is denied, naming the address, and applies once its class adds the tag")
	plain := framework.Bucket(policiesNS, "plain", "", "")
	g.Expect(env.Client.Create(ctx, plain)).To(Succeed())
	waitClaimDenied(g, ctx, plain, "policy e2e-cost-center rule tag-required: every resource needs a cost-center tag; missing on "+bucketAddress)
	plainMg := managedOf(g, ctx, plain)
	g.Expect(bucketExists(g, mc, plainMg.Spec.ForProvider.BucketName)).To(BeFalse())
	g.Expect(updateLatest(ctx, class, func() { class.SpecTemplate.ForProvider.Tags = map[string]string{"cost-center": "platform"} })).To(Succeed())
	waitBound(g, ctx, plain)
	tags, err := mc.GetBucketTagging(ctx, plainMg.Spec.ForProvider.BucketName)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tags.ToMap()).To(HaveKeyWithValue("cost-center", "platform"))

	By(t, "an edit of a policy plans the resources it denied again at once, not at their next drift check")
	notPublic := &policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-buckets-not-public"}}
	g.Expect(updateLatest(ctx, notPublic, func() { notPublic.Spec.Rules[0].Message = "buckets must never be public" })).To(Succeed())
	edited := time.Now()
	waitClaimDenied(g, ctx, public, "buckets must never be public (at "+bucketAddress+")")
	t.Logf("the denied resource was planned again %s after the policy's edit (drift interval 1h)", time.Since(edited).Round(100*time.Millisecond))
	g.Expect(bucketExists(g, mc, mg.Spec.ForProvider.BucketName)).To(BeFalse())

	By(t, "a drift correction that a policy denies is not applied, and the drift is reported")
	checkDeniedDrift(t, g, ctx, mc, plainMg)

	By(t, "a NamespacedPlanPolicy: a replacement waits for approval, an in-place change is applied with a warning")
	checkModulePolicies(t, g, ctx)

	By(t, "deleting the claims destroys what there is")
	g.Expect(env.Client.Delete(ctx, public)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, plain)).To(Succeed())
	waitGone(g, ctx, public, plain, mg, plainMg)
}

// checkCheckedCreate makes a bucket claim that every policy passes: its create runs
// one terraform command (the apply, its check inside it), where planning first would run
// a plan, a show and an apply; its status holds each rule's Pass.
func checkCheckedCreate(t *testing.T, g Gomega, ctx context.Context, runs *runLog, mc *minio.Client) {
	checked := framework.Bucket(policiesNS, "checked", "", "")
	checked.Spec.Tags = map[string]string{"cost-center": "cc-7"}
	g.Expect(env.Client.Create(ctx, checked)).To(Succeed())
	waitBound(g, ctx, checked)
	mg := managedOf(g, ctx, checked)
	g.Expect(mg.Status.Terraform.Plan.Policies).To(ConsistOf(
		common.PolicyResult{Policy: "e2e-buckets-not-public", Rule: "not-tagged-public", Result: "Pass"},
		common.PolicyResult{Policy: "e2e-cost-center", Rule: "tag-required", Result: "Pass"}))
	g.Expect(bucketExists(g, mc, mg.Spec.ForProvider.BucketName)).To(BeTrue())
	// its module's init may be its own; planned first, it would also run a plan and a show
	verbs := runs.of(mg.GetNamespace() + "/" + mg.GetName())
	g.Expect(slices.DeleteFunc(slices.Clone(verbs), func(v string) bool { return v == "init" })).To(Equal([]string{"apply"}),
		"the checked create's terraform commands: %v", verbs)
	t.Logf("checked create: terraform commands %v", verbs)
	g.Expect(env.Client.Delete(ctx, checked)).To(Succeed())
	waitGone(g, ctx, checked, mg)
}

// setupPolicyBuckets makes policiesNS, a MinIO Provider and an S3BucketClass without
// tags that policiesNS's default BucketClass points at.
func setupPolicyBuckets(g Gomega, ctx context.Context) *awsstoragev1.S3BucketClass {
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, policiesNS)).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.CredentialsSecret(adminNS, "minio-creds", minioUser, minioPassword)))).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.S3Provider(adminNS, "minio", "minio-creds", minioServer.Endpoint)))).To(Succeed())
	class := framework.S3BucketClass(adminNS, "policy-minio", "minio", common.ReclaimDelete, policiesNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, framework.BucketClass(policiesNS, "standard", class, true))).To(Succeed())
	return class
}

// bucketPolicies are the bucket policies of docs/policies.md, narrowed to policiesNS.
func bucketPolicies() []*policyv1.PlanPolicy {
	match := policyv1.PolicyMatch{Namespaces: []string{policiesNS}, ResourceTypes: []string{"aws_s3_bucket"}}
	return []*policyv1.PlanPolicy{
		{ObjectMeta: metav1.ObjectMeta{Name: "e2e-buckets-not-public"}, Spec: policyv1.PlanPolicySpec{Match: match,
			Rules: []policyv1.PolicyRule{{Name: "not-tagged-public", Expression: notPublicRule, Message: "buckets must not be public"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "e2e-cost-center"}, Spec: policyv1.PlanPolicySpec{Match: match,
			Rules: []policyv1.PolicyRule{{Name: "tag-required", Expression: costCenterRule, MessageExpression: costCenterMessage}}}},
	}
}

// waitClaimDenied waits until claim is Synced=False, reason PolicyDenied, with a message
// that says what; it returns the message.
func waitClaimDenied(g Gomega, ctx context.Context, claim *storagev1.Bucket, what string) string {
	var synced metav1.Condition
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		synced = framework.Condition(claim.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse), "%+v", synced)
		g.Expect(synced.Reason).To(Equal(common.ReasonPolicyDenied), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring(what))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	return synced.Message
}

// bucketExists asks MinIO.
func bucketExists(g Gomega, mc *minio.Client, name string) bool {
	ok, err := mc.BucketExists(context.Background(), name)
	g.Expect(err).NotTo(HaveOccurred())
	return ok
}

// checkDeniedDrift deletes mg's bucket behind Terraplane's back under a policy that
// denies recreating a bucket, and asks for a plan: the plan is denied, the drift
// reported, and the bucket stays gone.
func checkDeniedDrift(t *testing.T, g Gomega, ctx context.Context, mc *minio.Client, mg *awsstoragev1.S3Bucket) {
	noRecreate := &policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-no-recreate"}, Spec: policyv1.PlanPolicySpec{
		Match: policyv1.PolicyMatch{Namespaces: []string{policiesNS}, ResourceTypes: []string{"aws_s3_bucket"}},
		Rules: []policyv1.PolicyRule{{Name: "kept", Expression: noRecreateRule, Message: "a bucket is never made again: restore its data first"}}}}
	g.Expect(env.Client.Create(ctx, noRecreate)).To(Succeed())
	defer func() { _ = env.Client.Delete(ctx, noRecreate) }()
	bucket := mg.Spec.ForProvider.BucketName
	g.Expect(mc.RemoveBucket(ctx, bucket)).To(Succeed())
	g.Expect(requestPlan(ctx, mg)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		synced, drifted := framework.Condition(mg.Status.Conditions, common.TypeSynced), framework.Condition(mg.Status.Conditions, common.TypeDrifted)
		g.Expect(synced.Reason).To(Equal(common.ReasonPolicyDenied), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring("policy e2e-no-recreate rule kept: a bucket is never made again"))
		g.Expect(drifted.Status).To(Equal(metav1.ConditionTrue), "%+v", drifted)
		g.Expect(drifted.Message).To(And(ContainSubstring("deleted outside Terraform"), ContainSubstring(bucketAddress)))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Expect(mg.Status.Terraform.Plan.Reason).To(Equal(common.PlanDrift))
	g.Consistently(func() bool { return bucketExists(g, mc, bucket) }).WithTimeout(3*time.Second).Should(BeFalse(), "the denied correction was not applied")
	t.Logf("drift denied: %s", framework.Condition(mg.Status.Conditions, common.TypeSynced).Message)
}

// checkModulePolicies runs a server Module under a NamespacedPlanPolicy whose rules hold
// a plan that destroys something for approval and warn of in-place changes.
func checkModulePolicies(t *testing.T, g Gomega, ctx context.Context) {
	setupServerModules(g, ctx, policiesNS, "tok-policies-Hq4t")
	guard := &policyv1.NamespacedPlanPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: policiesNS, Name: "guard"}, Spec: policyv1.PlanPolicySpec{
		Match: policyv1.PolicyMatch{Kinds: []policyv1.KindMatch{{APIGroup: terraformv1.GroupVersion.Group, Kind: "Module"}}},
		Rules: []policyv1.PolicyRule{
			{Name: "destroy-approved", Enforcement: policyv1.EnforcementRequireApproval, Message: "destroying a server needs approval",
				Expression: `plan.resource_changes.all(rc, !('delete' in rc.change.actions))`},
			{Name: "in-place", Enforcement: policyv1.EnforcementWarn, Message: "changed in place",
				Expression: `plan.resource_changes.all(rc, !('update' in rc.change.actions))`},
		}}}
	g.Expect(env.Client.Create(ctx, guard)).To(Succeed())
	ledger := filepath.Join(t.TempDir(), "ledger")
	m := serverModuleObj(policiesNS, "server", ledger, func(m *terraformv1.Module) { m.Spec.DestructiveChanges = common.DestructiveAllow })
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	waitManagedReady(g, ctx, m)

	setForProvider(g, ctx, m, map[string]any{"label": "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(eventsWith(g, ctx, m, "PolicyWarning")).To(ContainElement(ContainSubstring("policy " + policiesNS + "/guard rule in-place: changed in place (at module.this.terraform_data.label)")))
	}).WithTimeout(timeout).Should(Succeed())
	waitManagedReady(g, ctx, m)
	g.Expect(m.Status.Terraform.Plan.Policies).To(ContainElement(common.PolicyResult{Policy: policiesNS + "/guard", Rule: "in-place", Result: "Warn",
		Message: "changed in place (at module.this.terraform_data.label)"}))
	g.Expect(m.Status.Terraform.LastApply.ID).To(Equal(m.Status.Terraform.Plan.ID), "a warning does not hold the plan")

	setForProvider(g, ctx, m, map[string]any{"size": "large"})
	var synced metav1.Condition
	g.Eventually(func(g Gomega) {
		synced, _ = moduleConditions(g, ctx, m)
		g.Expect(synced.Reason).To(Equal(common.ReasonPolicyRequiresApproval), "%+v", synced)
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(synced.Message).To(ContainSubstring("destroying a server needs approval (at module.this.terraform_data.server)"))
	g.Consistently(func() int { return creates(g, ledger, "large") }).WithTimeout(3 * time.Second).Should(BeZero())
	approvePlan(g, ctx, m, m.Status.Terraform.Plan.ID)
	g.Eventually(func() int { return creates(g, ledger, "large") }).WithTimeout(timeout).Should(Equal(1))
	waitManagedReady(g, ctx, m)
	deleteModule(g, ctx, m)
}

// runLog records the terraform commands a controller's engine ran, by resource
// (namespace/name).
type runLog struct {
	mu    sync.Mutex
	verbs map[string][]string
}

// add records r (the engine's Options.OnRun).
func (l *runLog) add(r tfengine.Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.verbs == nil {
		l.verbs = map[string][]string{}
	}
	l.verbs[r.Name] = append(l.verbs[r.Name], r.Verb)
}

// of is the commands run for the resource name (namespace/name), in order.
func (l *runLog) of(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.verbs[name])
}
