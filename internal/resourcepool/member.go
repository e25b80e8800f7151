package resourcepool

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// State is where a pool member stands.
type State string

// Member states.
const (
	// Ready members can be handed out.
	Ready State = "ready"
	// Provisioning members are not Ready yet and not failing.
	Provisioning State = "provisioning"
	// Failed members report Synced False; they keep their place until someone deletes them.
	Failed State = "failed"
	// HandedOut members were taken by a claim; the hand-over may still be under way.
	HandedOut State = "handedOut"
	// Deleting members are going away and count for nothing.
	Deleting State = "deleting"
)

// Member is what the pool rules need to know of one member claim.
type Member struct {
	// Name and UID of the member claim.
	Name string
	UID  types.UID
	// Created is the member's creation time.
	Created time.Time
	// State of the member.
	State State
	// TakenBy is the claim the member was handed out to, when it was.
	TakenBy Taker
	// ClassRef and ResourceRef are the member's spec.classRef.name and spec.resourceRef.
	ClassRef    string
	ResourceRef *common.ObjectReference
	// ResourceVersion is the version the member was read at.
	ResourceVersion string
	// Object is the member as read.
	Object *unstructured.Unstructured
	// PlacedAt is when the scheduler last placed an application on the member (a
	// KubernetesCluster of an autoscaled pool); zero when never.
	PlacedAt time.Time
}

// Taker names the claim a member was handed out to.
type Taker struct {
	Name string
	UID  types.UID
}

// IsZero reports whether t names no claim.
func (t Taker) IsZero() bool { return t.UID == "" }

// String is the annotation value of t: <name>/<uid>.
func (t Taker) String() string { return t.Name + "/" + string(t.UID) }

// ParseTaker reads a PoolMemberTakenByAnnotation value; a malformed one names no claim.
func ParseTaker(v string) Taker {
	name, uid, ok := strings.Cut(v, "/")
	if !ok || name == "" || uid == "" {
		return Taker{}
	}
	return Taker{Name: name, UID: types.UID(uid)}
}

// Fill records, on a claim, the pool member it took.
type Fill struct {
	Pool, Member string
	UID          types.UID
}

// String is the annotation value of f: <pool>/<member>/<member UID>.
func (f Fill) String() string { return f.Pool + "/" + f.Member + "/" + string(f.UID) }

// ParseFill reads a PoolMemberAnnotation value; ok is false when it is absent or malformed.
func ParseFill(annotations map[string]string) (Fill, bool) {
	parts := strings.Split(annotations[common.PoolMemberAnnotation], "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Fill{}, false
	}
	return Fill{Pool: parts[0], Member: parts[1], UID: types.UID(parts[2])}, true
}

// StateOf classifies a member from what it records: taken (the annotation), deleting,
// Ready, failing (Synced False for its current generation) or provisioning.
func StateOf(annotations map[string]string, deleting bool, generation int64, conds []metav1.Condition) State {
	switch {
	case annotations[common.PoolMemberTakenByAnnotation] != "":
		return HandedOut
	case deleting:
		return Deleting
	case meta.IsStatusConditionTrue(conds, common.TypeReady):
		return Ready
	}
	if s := meta.FindStatusCondition(conds, common.TypeSynced); s != nil && s.Status == metav1.ConditionFalse && s.ObservedGeneration == generation {
		return Failed
	}
	return Provisioning
}

// FromUnstructured reads a member claim of any kind.
func FromUnstructured(u *unstructured.Unstructured) (Member, error) {
	var claim struct {
		Spec   common.ClaimSpec   `json:"spec"`
		Status common.ClaimStatus `json:"status"`
	}
	content := map[string]any{"spec": u.Object["spec"], "status": u.Object["status"]}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(content, &claim, false); err != nil {
		return Member{}, fmt.Errorf("read %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	m := Member{Name: u.GetName(), UID: u.GetUID(), Created: u.GetCreationTimestamp().Time, ResourceVersion: u.GetResourceVersion(),
		TakenBy: ParseTaker(u.GetAnnotations()[common.PoolMemberTakenByAnnotation]), ResourceRef: claim.Spec.ResourceRef, Object: u,
		State: StateOf(u.GetAnnotations(), !u.GetDeletionTimestamp().IsZero(), u.GetGeneration(), claim.Status.Conditions)}
	if claim.Spec.ClassRef != nil {
		m.ClassRef = claim.Spec.ClassRef.Name
	}
	if at, err := time.Parse(time.RFC3339, u.GetAnnotations()[common.PlacedAtAnnotation]); err == nil {
		m.PlacedAt = at
	}
	return m, nil
}
