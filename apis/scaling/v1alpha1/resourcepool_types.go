package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClaimTemplate describes the claims a pool makes: any claim kind, compiled in or
// defined by a ClaimDefinition.
type ClaimTemplate struct {
	// APIVersion of the claims, e.g. storage.terraplane.io/v1alpha1.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind of the claims, e.g. Bucket; it must be a claim kind.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Labels put on every member, besides terraplane.io/pool.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Spec of every member, as the claim kind takes it (classRef, the kind's own
	// fields); poolRef and resourceRef are not allowed, and writeConnectionSecretToRef is
	// set to the member's own name.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Spec *apiextensionsv1.JSON `json:"spec,omitempty"`
}

// Autoscale sizes a pool of KubernetesCluster claims by the KubernetesApplications that
// need clusters: it adds a member for applications the scheduler cannot place, and
// removes a member that has held no application for scaleDownAfter.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || self.min <= self.max",message="autoscale.min must be at most autoscale.max"
type Autoscale struct {
	// ApplicationsPerCluster is how many applications one member takes; the scheduler
	// places no more on it, and the pool adds a member when every matching one is full.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	ApplicationsPerCluster int32 `json:"applicationsPerCluster"`
	// ScaleDownAfter is how long a Ready member holds no application before it is
	// deleted (and with it, through its class's reclaim policy, its cluster), while the
	// pool has more than min members. Default 10m.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="scaleDownAfter must be a duration such as 30s or 10m"
	ScaleDownAfter *metav1.Duration `json:"scaleDownAfter,omitempty"`
	// Min is how many members the pool keeps however idle they are.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Min int32 `json:"min,omitempty"`
	// Max caps the members: past it, applications wait.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Max int32 `json:"max"`
}

// ResourcePoolSpec says which claims a pool keeps ready and how many.
// +kubebuilder:validation:XValidation:rule="!has(self.maxSize) || self.maxSize >= self.size",message="maxSize must be at least size"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscale) || (self.claimTemplate.kind == 'KubernetesCluster' && self.claimTemplate.apiVersion.startsWith('compute.terraplane.io/'))",message="autoscale is only for pools of KubernetesCluster claims (compute.terraplane.io)"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscale) || self.size == 0",message="with autoscale, leave size at 0: autoscale.min and autoscale.max bound the members"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscale) || !has(self.maxSize)",message="with autoscale, autoscale.max is the cap: leave maxSize unset"
type ResourcePoolSpec struct {
	// ClaimTemplate is what each member is made from.
	ClaimTemplate ClaimTemplate `json:"claimTemplate"`
	// Size is how many members the pool keeps (ready, provisioning or failed), besides
	// the ones it has handed out. With autoscale, leave it at 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Size int32 `json:"size"`
	// MaxSize caps the members the pool has made and that still exist, the ones handed
	// out to claims included: at the cap, a member handed out is not replaced until a
	// claim it filled is deleted. Unset: no cap.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxSize *int32 `json:"maxSize,omitempty"`
	// MaxConcurrent is how many members may be provisioning at once. Unset: no limit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrent *int32 `json:"maxConcurrent,omitempty"`
	// Autoscale makes a pool of KubernetesCluster claims grow for applications that no
	// member can take and shrink when members stand idle; size and maxSize are then unused.
	// +optional
	Autoscale *Autoscale `json:"autoscale,omitempty"`
}

// ClusterMember is one member of an autoscaled pool as its last reconcile saw it.
type ClusterMember struct {
	// Name of the KubernetesCluster claim.
	Name string `json:"name"`
	// Applications placed on it (those being deleted included: their objects are still
	// being removed from it).
	Applications int32 `json:"applications"`
	// Ready is whether the member is Ready.
	Ready bool `json:"ready"`
	// IdleSince is when a Ready member was first seen holding no application; unset while
	// it holds one.
	// +optional
	IdleSince *metav1.Time `json:"idleSince,omitempty"`
}

// ResourcePoolStatus counts the pool's members by state.
type ResourcePoolStatus struct {
	// Ready members: Ready and not handed out.
	// +optional
	Ready int32 `json:"ready"`
	// Provisioning members: not Ready yet, and not failing.
	// +optional
	Provisioning int32 `json:"provisioning"`
	// Failed members: Synced False; they keep their place in the pool until deleted.
	// +optional
	Failed int32 `json:"failed"`
	// HandedOut is how many claims the pool has filled that still exist (and members
	// being handed over).
	// +optional
	HandedOut int32 `json:"handedOut"`
	// Clusters are the members of an autoscaled pool, with their applications.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []ClusterMember `json:"clusters,omitempty"`
	// Pending is how many applications that the pool's members would match wait for a
	// cluster (autoscale only).
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Synced (the last reconcile succeeded, or why not) and Ready (size
	// members are Ready).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourcePool keeps size claims of one kind ready in its namespace; a claim that names
// it in spec.poolRef takes a ready member at once (its managed resource is rebound to
// the claim), and the pool makes a replacement.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane,shortName=rpool
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=".spec.claimTemplate.kind"
// +kubebuilder:printcolumn:name="SIZE",type=integer,JSONPath=".spec.size"
// +kubebuilder:printcolumn:name="READY",type=integer,JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="PROVISIONING",type=integer,JSONPath=".status.provisioning"
// +kubebuilder:printcolumn:name="FAILED",type=integer,JSONPath=".status.failed"
// +kubebuilder:printcolumn:name="HANDED-OUT",type=integer,JSONPath=".status.handedOut"
// +kubebuilder:printcolumn:name="PENDING",type=integer,JSONPath=".status.pending",priority=1
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ResourcePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ResourcePoolSpec   `json:"spec"`
	Status ResourcePoolStatus `json:"status,omitempty"`
}

// ResourcePoolList is a list of ResourcePool.
// +kubebuilder:object:root=true
type ResourcePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourcePool `json:"items"`
}
