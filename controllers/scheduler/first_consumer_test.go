package scheduler

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// consumer is an application in apps using Secret secret, placed on cluster at minute at
// (no cluster when cluster is empty).
func consumer(name, secret, cluster string, at int) *workloadv1.KubernetesApplication {
	a := placedApp(name, cluster)
	a.Spec.ResourceTemplates = []workloadv1.KubernetesApplicationResourceTemplate{{Spec: workloadv1.KubernetesApplicationResourceSpec{
		Secrets: []corev1.LocalObjectReference{{Name: "other"}, {Name: secret}}}}}
	if cluster != "" {
		a.Status.Conditions = []metav1.Condition{{Type: workloadv1.TypeScheduled, Status: metav1.ConditionTrue, Reason: ReasonScheduled,
			LastTransitionTime: metav1.NewTime(time.Date(2024, 1, 1, 0, at, 0, 0, time.UTC))}}
	}
	return a
}

// TestFirstConsumerCluster: the claim goes where its first scheduled consumer went (ties
// by name); applications not using the Secret, not placed or being deleted do not count.
func TestFirstConsumerCluster(t *testing.T) {
	deleting := consumer("a-deleting", "db", "gone", 1)
	deleting.Finalizers = []string{"x"}
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	cases := map[string]struct {
		apps   []client.Object
		want   string
		labels map[string]string
	}{
		"none":                 {nil, "", nil},
		"not placed":           {[]client.Object{consumer("a", "db", "", 0)}, "", nil},
		"another secret":       {[]client.Object{consumer("a", "cache", "east", 1)}, "", nil},
		"earliest wins":        {[]client.Object{consumer("a", "db", "west", 5), consumer("b", "db", "east", 2)}, "KubernetesCluster/apps/east", map[string]string{"region": "east"}},
		"ties by name":         {[]client.Object{consumer("b", "db", "west", 2), consumer("a", "db", "east", 2)}, "KubernetesCluster/apps/east", map[string]string{"region": "east"}},
		"a deleting one skips": {[]client.Object{deleting, consumer("b", "db", "west", 3)}, "KubernetesCluster/apps/west", map[string]string{"region": "west"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := append([]client.Object{usableCluster("east", map[string]string{"region": "east"}), usableCluster("west", map[string]string{"region": "west"})}, tc.apps...)
			f := FirstConsumers{Client: fake.NewClientBuilder().WithScheme(schedulerScheme(t)).WithObjects(objs...).Build()}
			got, labels, err := f.Cluster(context.Background(), "apps", "db", "")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || labels["region"] != tc.labels["region"] {
				t.Errorf("Cluster = %q %v, want %q %v", got, labels, tc.want, tc.labels)
			}
		})
	}
}

// TestSelectedClusterErrors: an annotation that does not parse, or names a cluster that
// does not exist, is a user error the claim reports.
func TestSelectedClusterErrors(t *testing.T) {
	f := FirstConsumers{Client: fake.NewClientBuilder().WithScheme(schedulerScheme(t)).Build()}
	for selected, reason := range map[string]string{
		"nonsense":                    "InvalidSelectedCluster",
		"Deployment/apps/x":           "InvalidSelectedCluster",
		"KubernetesCluster/apps/none": "SelectedClusterNotFound",
		"ProviderConfig/apps/none":    "SelectedClusterNotFound",
	} {
		_, _, err := f.Cluster(context.Background(), "apps", "db", selected)
		if u, ok := resource.AsUserError(err); !ok || u.Reason != reason {
			t.Errorf("Cluster(%q) = %v, want a %s user error", selected, err, reason)
		}
	}
}

// TestNewlyScheduled: only the events of an application that has just got a cluster pass.
func TestNewlyScheduled(t *testing.T) {
	waiting, placed := placedApp("a", ""), placedApp("a", "east")
	claim := &computev1.KubernetesCluster{}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "x"}
	cases := map[string]struct {
		pass bool
		got  bool
	}{
		"create, placed":     {true, newlyScheduled.Create(event.CreateEvent{Object: placed})},
		"create, waiting":    {false, newlyScheduled.Create(event.CreateEvent{Object: waiting})},
		"update, now placed": {true, newlyScheduled.Update(event.UpdateEvent{ObjectOld: waiting, ObjectNew: placed})},
		"update, was placed": {false, newlyScheduled.Update(event.UpdateEvent{ObjectOld: placed, ObjectNew: placed})},
		"update, unplaced":   {false, newlyScheduled.Update(event.UpdateEvent{ObjectOld: placed, ObjectNew: waiting})},
		"delete":             {false, newlyScheduled.Delete(event.DeleteEvent{Object: placed})},
		"generic":            {false, newlyScheduled.Generic(event.GenericEvent{Object: placed})},
		"another kind":       {false, newlyScheduled.Create(event.CreateEvent{Object: claim})},
	}
	for name, tc := range cases {
		if tc.got != tc.pass {
			t.Errorf("%s: passes %v, want %v", name, tc.got, tc.pass)
		}
	}
	obj, pred := FirstConsumers{}.Consumers()
	if _, ok := obj.(*workloadv1.KubernetesApplication); !ok || pred == nil {
		t.Errorf("Consumers = %T, %v", obj, pred)
	}
}
