// Package workload submits KubernetesApplications (group workload.terraplane.io) to
// target clusters: the application controller turns an application's resourceTemplates
// into KubernetesApplicationResources it controls, and the resource controller creates,
// updates and deletes each one's object (and propagated Secrets) in the target cluster
// through controllers/kubernetes, which it imports; that package never imports this one.
package workload
