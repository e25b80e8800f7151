package chaos

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	coordinationv1 "k8s.io/api/coordination/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
)

// TestUnlockCommand: `terraplane unlock KIND/NAME` releases a lock another host left,
// keeps it when --lock-id no longer matches, and asks for the group of an ambiguous kind.
func TestUnlockCommand(t *testing.T) {
	ctx := context.Background()
	const unlockNS = "unlock"
	if err := env.Namespace(ctx, unlockNS); err != nil {
		t.Fatal(err)
	}
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: unlockNS, Name: "web"}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "none"}}
	m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{}`)}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: unlockNS, Name: "lock-" + resource.StateSecretName(m)}
	info, _ := json.Marshal(statelock.LockInfo{ID: "lock-1", Who: "ci@elsewhere", Operation: "OperationTypeApply", Created: time.Now()})
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		Annotations: map[string]string{common.LockInfoAnnotation: string(info)}}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("lock-1")}}
	if err := env.Client.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		args = append(append([]string{"unlock"}, args...), "--kubeconfig", env.ControlPlane.Kubeconfig)
		out, err := exec.Command(bin, args...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("Module/web", "-n", unlockNS, "--lock-id", "lock-0"); err == nil || !strings.Contains(out, "held by another run") {
		t.Fatalf("a stale --lock-id: err %v, output %q; want a refusal", err, out)
	}
	if h, _ := statelock.LockHolder(ctx, env.Client, key); h == nil {
		t.Fatal("the lock was released despite a different --lock-id")
	}
	out, err := run("module/web", "-n", unlockNS)
	if err != nil || !strings.Contains(out, "released the Terraform state lock lock-1 (held by ci@elsewhere") {
		t.Fatalf("unlock: err %v, output %q", err, out)
	}
	if h, _ := statelock.LockHolder(ctx, env.Client, key); h != nil {
		t.Fatalf("still locked by %+v", h)
	}
	if out, err := run("Module/web", "-n", unlockNS); err != nil || !strings.Contains(out, "not locked") {
		t.Fatalf("unlock of a free lock: err %v, output %q", err, out)
	}
	if out, err := run("Database/orders", "-n", unlockNS); err == nil || !strings.Contains(out, "database.database.postgresql.terraplane.io") {
		t.Fatalf("ambiguous kind: err %v, output %q", err, out)
	}
}
