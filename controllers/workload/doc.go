// Package workload submits KubernetesApplications to target clusters: the application
// controller turns an application's resourceTemplates into KubernetesApplicationResources
// it controls, the resource controller creates, updates and deletes each one's object (and
// propagated Secrets) in the target cluster, the Object controller manages a Kubernetes
// object in a target cluster as an external resource with connection details read from
// it, and the ProviderConfig controller reports whether a kubernetes.terraplane.io
// ProviderConfig's cluster answers.
package workload
