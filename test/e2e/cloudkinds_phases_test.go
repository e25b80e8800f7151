package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
)

// cloudWait bounds each wait of a cloud kind's phase: the cases share two CPUs.
const cloudWait = 10 * time.Minute

// cloudClaim is one case's claim, its classes and Provider, as the phases find them.
type cloudClaim struct {
	tc      cloudKindCase
	ns      string
	cloud   string // gcp or azure
	managed schema.GroupVersionKind
	claim   schema.GroupVersionKind
	uid     string // the claim's UID's first 8 hex digits, in every name derived from it
}

func newCloudClaim(tc cloudKindCase) *cloudClaim {
	gvk := func(short, suffix string) schema.GroupVersionKind {
		group, kind, _ := strings.Cut(short, "/")
		return schema.GroupVersionKind{Group: group + ".terraplane.io", Version: "v1alpha1", Kind: kind + suffix}
	}
	_, cloud, _ := strings.Cut(strings.Split(tc.managed, "/")[0], ".")
	return &cloudClaim{tc: tc, ns: "cloud-" + tc.name, cloud: cloud, managed: gvk(tc.managed, ""), claim: gvk(tc.claim, "")}
}

// providerSpec is the case's Provider's spec, with fake credentials the stand-in takes.
func (c *cloudClaim) providerSpec() map[string]any {
	ref := map[string]any{"name": c.tc.name + "-credentials"}
	if c.cloud == "gcp" {
		return map[string]any{"project": "e2e-" + c.tc.name, "region": "europe-west1", "credentialsSecretRef": ref}
	}
	return map[string]any{"subscriptionID": "00000000-0000-0000-0000-00000000e2e0", "tenantID": "00000000-0000-0000-0000-00000000e2e1",
		"location": "westeurope", "credentialsSecretRef": ref}
}

// objects are the case's Secret, Provider, classes and claim, in that order.
func (c *cloudClaim) objects() []map[string]any {
	name, classGVK := c.tc.name, c.managed
	classGVK.Kind += "Class"
	portable := c.claim
	portable.Kind += "Class"
	creds := map[string]any{"credentials.json": `{"type": "service_account", "project_id": "e2e"}`}
	if c.cloud == "azure" {
		creds = map[string]any{"clientID": "00000000-0000-0000-0000-00000000e2e2", "clientSecret": "e2e-client-secret"}
	}
	meta := func(ns string) map[string]any { return map[string]any{"name": name, "namespace": ns} }
	return []map[string]any{
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name + "-credentials", "namespace": adminNS}, "stringData": creds},
		{"apiVersion": c.cloud + ".terraplane.io/v1alpha1", "kind": "Provider", "metadata": meta(adminNS), "spec": c.providerSpec()},
		{"apiVersion": classGVK.GroupVersion().String(), "kind": classGVK.Kind, "metadata": meta(adminNS),
			"allowedNamespaces": map[string]any{"names": []any{c.ns}},
			"specTemplate":      map[string]any{"providerRef": map[string]any{"name": name}, "reclaimPolicy": "Delete", "forProvider": c.tc.class}},
		{"apiVersion": portable.GroupVersion().String(), "kind": portable.Kind, "metadata": meta(c.ns),
			"classRef": map[string]any{"apiVersion": classGVK.GroupVersion().String(), "kind": classGVK.Kind, "name": name, "namespace": adminNS}},
		{"apiVersion": c.claim.GroupVersion().String(), "kind": c.claim.Kind, "metadata": meta(c.ns),
			"spec": merged(c.tc.claimSpec, map[string]any{"classRef": map[string]any{"name": name}, "writeConnectionSecretToRef": map[string]any{"name": name + "-conn"}})},
	}
}

// create applies the case's objects and waits until the claim is Bound and Ready.
func (c *cloudClaim) create(ctx context.Context, g Gomega) {
	g.Expect(env.Namespace(ctx, c.ns)).To(Succeed())
	for _, obj := range c.objects() {
		raw, err := json.Marshal(obj)
		g.Expect(err).NotTo(HaveOccurred())
		_, err = devenv.ApplyYAML(ctx, env.Client, raw)
		g.Expect(err).NotTo(HaveOccurred())
	}
	claim := c.claimObject()
	g.Eventually(func(g Gomega) { expectClaimReady(ctx, g, claimRef{c.claim, c.ns, c.tc.name}) }).WithTimeout(cloudWait).WithPolling(time.Second).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
	c.uid = strings.ReplaceAll(string(claim.GetUID()), "-", "")[:8]
	g.Expect(condition(c.managedObject(ctx, g), common.TypeReady)).To(HaveKeyWithValue("status", "True"))
}

// expectDocumented checks the claim's connection Secret and the resource's
// status.atProvider against the kind's section of its docs page.
func (c *cloudClaim) expectDocumented(ctx context.Context, g Gomega) {
	doc := documentedOutputs(g, c.cloud, c.managed.Kind)
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: c.ns, Name: c.tc.name + "-conn"}, s)).To(Succeed())
	g.Expect(keys(s)).To(ConsistOf(doc.connection), "the connection Secret's keys")
	for k, v := range s.Data {
		g.Expect(v).NotTo(BeEmpty(), "connection key %s", k)
	}
	at, _, _ := unstructured.NestedMap(c.managedObject(ctx, g).Object, "status", "atProvider")
	for _, k := range doc.atProvider {
		g.Expect(at).To(HaveKey(k), "status.atProvider")
	}
	g.Expect(at).To(HaveKeyWithValue("endpoint", Not(BeEmpty())))
}

// editInPlace edits the claim and waits for the plan that updates in place to be
// applied, with no approval asked.
func (c *cloudClaim) editInPlace(ctx context.Context, g Gomega) {
	before := lastApplyID(c.managedObject(ctx, g))
	claim := c.claimObject()
	g.Expect(updateLatest(ctx, claim, func() {
		for k, v := range c.tc.inPlace {
			g.Expect(unstructured.SetNestedField(claim.Object, v, "spec", k)).To(Succeed())
		}
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		mg := c.managedObject(ctx, g)
		g.Expect(condition(mg, common.TypeSynced)).NotTo(HaveKeyWithValue("reason", common.ReasonDestructiveChangeRefused))
		applied, _, _ := unstructured.NestedMap(mg.Object, "status", "terraform", "lastApply")
		g.Expect(applied["id"]).NotTo(Or(BeNil(), Equal(before)), "no new apply")
		g.Expect(applied).To(And(HaveKeyWithValue("change", BeNumerically(">", 0)), HaveKeyWithValue("replace", BeNumerically("==", 0)),
			HaveKeyWithValue("destroy", BeNumerically("==", 0))))
		g.Expect(plannedActions(mg, c.tc.updated)).To(ContainElement([]string{"update"}))
	}).WithTimeout(cloudWait).WithPolling(time.Second).Should(Succeed())
}

// editReplacing makes the case's replacing edit, expects it refused, approves the plan
// and waits until that very plan is applied.
func (c *cloudClaim) editReplacing(ctx context.Context, g Gomega) {
	c.applyEdit(ctx, g, c.tc.replacing)
	var plan map[string]any
	g.Eventually(func(g Gomega) {
		mg := c.managedObject(ctx, g)
		g.Expect(condition(mg, common.TypeSynced)).To(HaveKeyWithValue("reason", common.ReasonDestructiveChangeRefused))
		plan, _, _ = unstructured.NestedMap(mg.Object, "status", "terraform", "plan")
		for _, typ := range c.tc.replaced {
			g.Expect(plannedActions(mg, typ)).To(ContainElement(ContainElements("delete", "create")), "%s is not replaced", typ)
		}
	}).WithTimeout(cloudWait).WithPolling(time.Second).Should(Succeed())
	g.Expect(plan).To(HaveKeyWithValue("replace", BeNumerically(">=", len(c.tc.replaced))))
	g.Consistently(func(g Gomega) {
		g.Expect(lastApplyID(c.managedObject(ctx, g))).NotTo(Equal(plan["id"]))
	}).WithTimeout(3*time.Second).Should(Succeed(), "a refused plan was applied")
	mg := c.managedObject(ctx, g)
	patch := []byte(`{"spec":{"approvedPlan":"` + plan["id"].(string) + `"}}`)
	g.Expect(env.Client.Patch(ctx, mg, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	g.Eventually(func(g Gomega) {
		mg := c.managedObject(ctx, g)
		g.Expect(lastApplyID(mg)).To(Equal(plan["id"]))
		g.Expect(condition(mg, common.TypeReady)).To(HaveKeyWithValue("status", "True"))
	}).WithTimeout(cloudWait).WithPolling(time.Second).Should(Succeed())
}

// applyEdit merges e's fields into the case's Provider or non-portable class.
func (c *cloudClaim) applyEdit(ctx context.Context, g Gomega, e cloudEdit) {
	obj := &unstructured.Unstructured{}
	path := []string{"spec"}
	obj.SetAPIVersion(c.cloud + ".terraplane.io/v1alpha1")
	obj.SetKind("Provider")
	if e.on == "class" {
		obj.SetGroupVersionKind(c.managed.GroupVersion().WithKind(c.managed.Kind + "Class"))
		path = []string{"specTemplate", "forProvider"}
	}
	obj.SetNamespace(adminNS)
	obj.SetName(c.tc.name)
	g.Expect(updateLatest(ctx, obj, func() {
		for k, v := range e.set {
			g.Expect(unstructured.SetNestedField(obj.Object, v, append(path, k)...)).To(Succeed())
		}
	})).To(Succeed())
}

// deleteAndExpectDestroy deletes the claim, waits until it and its resource are gone,
// and finds the deletes of the state it made in the stand-ins' call log.
func (c *cloudClaim) deleteAndExpectDestroy(ctx context.Context, g Gomega, calls string) {
	mg := c.managedObject(ctx, g)
	start := time.Now()
	g.Expect(env.Client.Delete(ctx, c.claimObject())).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, obj := range []client.Object{c.claimObject(), mg} {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s %s still exists (%v)", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}).WithTimeout(cloudWait).WithPolling(time.Second).Should(Succeed())
	deleted := deletedSince(g, calls, start, c.uid, c.tc.name)
	for _, typ := range c.tc.destroyed {
		g.Expect(deleted).To(ContainElement(typ), "the stand-in was not asked to delete the %s", typ)
	}
}

func (c *cloudClaim) claimObject() *unstructured.Unstructured {
	return claimObject(claimRef{c.claim, c.ns, c.tc.name})
}

func (c *cloudClaim) managedObject(ctx context.Context, g Gomega) *unstructured.Unstructured {
	return managedObject(ctx, g, claimRef{c.claim, c.ns, c.tc.name})
}

// condition is the status condition typ of obj (empty when it has none).
func condition(obj *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return map[string]any{}
}

// lastApplyID is the id of the plan mg last applied ("" for none).
func lastApplyID(mg *unstructured.Unstructured) any {
	id, _, _ := unstructured.NestedString(mg.Object, "status", "terraform", "lastApply", "id")
	return id
}

// plannedActions are the actions of mg's latest plan on the resources of type typ.
func plannedActions(mg *unstructured.Unstructured, typ string) [][]string {
	changes, _, _ := unstructured.NestedSlice(mg.Object, "status", "terraform", "plan", "changes")
	var out [][]string
	for _, ch := range changes {
		m, _ := ch.(map[string]any)
		if addr, _ := m["address"].(string); strings.Contains(addr, "."+typ+".") {
			var actions []string
			for _, a := range m["actions"].([]any) {
				actions = append(actions, a.(string))
			}
			out = append(out, actions)
		}
	}
	return out
}

// merged is a copy of a with b's keys set.
func merged(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range []map[string]any{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
