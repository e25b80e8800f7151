package v1alpha1

func init() {
	SchemeBuilder.Register(&Object{}, &ObjectList{}, &ObjectClass{}, &ObjectClassList{}, &Cluster{}, &ClusterList{})
}
