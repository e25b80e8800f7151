package managed

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Run is the record of one run of a resource's tool (a terraform run): the status it
// leaves, which the reconciler writes together with the reconcile's outcome. The way
// back from an Apply is this record, not a call into the kind.
type Run struct {
	// Terraform is status.terraform as the run leaves it, but for the inputs hash: that
	// is the one before the run, which only a success moves to Settle's.
	Terraform common.TerraformStatus
	// Settle is what a successful run settles the resource at; nil when it settles
	// nothing (drift it left uncorrected).
	Settle *Settled
	// Drift is what the run says of drift, and DriftMessage what it found.
	Drift        Drift
	DriftMessage string
	// Missing says what of the external resource the run found deleted outside the
	// controller and left so; empty when nothing. The resource is then Ready=False,
	// reason Missing, whatever the outcome: its status must not vouch for what is gone.
	Missing string
}

// Settled is the inputs hash and class revision a successful run settles a resource at.
type Settled struct {
	InputsHash, Revision string
}

// Drift is what a run says of drift.
type Drift int

const (
	// DriftUnknown says nothing of drift: a run that succeeds leaves none.
	DriftUnknown Drift = iota
	// DriftNone: the run applied the spec, so none is left, whatever the outcome.
	DriftNone
	// DriftFound: the run found drift and did not correct it.
	DriftFound
)

// write records run in st for generation gen, given whether the outcome succeeded: the
// Terraform status, the Drifted condition, and what a success settles.
func (run *Run) write(st *common.ManagedStatus, gen int64, succeeded bool) {
	hash := st.Terraform.InputsHash
	st.Terraform = run.Terraform
	st.Terraform.InputsHash = hash
	switch {
	case run.Drift == DriftFound:
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionTrue, common.ReasonDriftDetected, run.DriftMessage)
	case run.Drift == DriftNone || succeeded:
		resource.SetCondition(&st.Conditions, gen, common.TypeDrifted, metav1.ConditionFalse, common.ReasonNoDrift, "")
	}
	if succeeded && run.Settle != nil {
		st.Terraform.InputsHash, st.Revision = run.Settle.InputsHash, run.Settle.Revision
	}
}

// missing is what of the external resource run found deleted and left so; empty when
// nothing, or when nothing ran.
func (run *Run) missing() string {
	if run == nil {
		return ""
	}
	return run.Missing
}
