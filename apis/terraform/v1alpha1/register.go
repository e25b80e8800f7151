package v1alpha1

func init() {
	SchemeBuilder.Register(&ModuleClass{}, &ModuleClassList{}, &Module{}, &ModuleList{}, &ClassRevision{}, &ClassRevisionList{}, &Plan{}, &PlanList{})
}
