package claim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"terraplane.io/terraplane/internal/dynclaim"
	"terraplane.io/terraplane/internal/resource"
)

// TestAsParameters: a message naming the module input variables terraform refused names
// the claim's parameters that set them; a variable the class sets says so; any other
// message, and what follows the variables, stays as it is.
func TestAsParameters(t *testing.T) {
	defined := dynclaim.NewClaim(schema.GroupVersionKind{Group: "queues.example.org", Version: "v1alpha1", Kind: "Queue"})
	defined.Spec.Parameters = &apiextensionsv1.JSON{Raw: []byte(`{"visibility_timeout_seconds":50000,"name":"orders","token_secretSecretRef":{"name":"s","key":"k"}}`)}
	bucket := bucketClaim("fast")
	bucket.Spec.Versioning = true
	for name, c := range map[string]struct {
		claim     resource.Claim
		msg, want string
	}{
		"a parameter of a defined kind": {defined,
			"variable visibility_timeout_seconds: expected visibility_timeout_seconds to be in the range (0 - 43200), got 50000 (attribute visibility_timeout_seconds of module.this.aws_sqs_queue.this[0])",
			"parameter spec.parameters.visibility_timeout_seconds: expected visibility_timeout_seconds to be in the range (0 - 43200), got 50000 (attribute visibility_timeout_seconds of module.this.aws_sqs_queue.this[0])"},
		"two parameters": {defined,
			"variables name, visibility_timeout_seconds: Invalid function argument: Invalid value",
			"parameter spec.parameters.name, parameter spec.parameters.visibility_timeout_seconds: Invalid function argument: Invalid value"},
		"a sensitive parameter, from a Secret": {defined,
			"variable token_secret: Invalid value for input variable: too short",
			"parameter spec.parameters.token_secretSecretRef: Invalid value for input variable: too short"},
		"a variable the class sets": {defined,
			"variables name, fifo_queue: Invalid combination",
			"parameter spec.parameters.name, variable fifo_queue (set by the class, not the claim): Invalid combination"},
		"a field of a built-in kind, in camelCase": {bucket,
			"variable versioning: Invalid value for input variable: a bool is required",
			"parameter spec.versioning: Invalid value for input variable: a bool is required"},
		"a message naming no variable":                  {defined, "creating SQS Queue (q): api error AccessDenied: no", "creating SQS Queue (q): api error AccessDenied: no"},
		"variables later in the message are left alone": {defined, "plan failed: variable name: x", "plan failed: variable name: x"},
	} {
		if diff := cmp.Diff(c.want, asParameters(c.claim, c.msg)); diff != "" {
			t.Errorf("%s: asParameters (-want +got):\n%s", name, diff)
		}
	}
}
