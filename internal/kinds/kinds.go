package kinds

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
)

// NewScheme returns a scheme with the Kubernetes built-ins and every Terraplane API.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(storagev1.AddToScheme(s))
	utilruntime.Must(awsv1.AddToScheme(s))
	utilruntime.Must(awsstoragev1.AddToScheme(s))
	return s
}

// NewRegistry returns a registry with every shipped kind.
func NewRegistry() *registry.Registry {
	r := registry.New(NewScheme())
	r.AddManaged(s3Bucket())
	r.AddClaim(bucket())
	return r
}
