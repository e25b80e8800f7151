// Package argocd holds what Argo CD needs to read Terraplane's objects: which of the Lua
// health scripts the chart ships (charts/terraplane/argocd) each kind takes, the argocd-cm
// entries that say so, and the evaluation of a script over an object the way Argo CD runs
// it (gopher-lua), for the tests.
package argocd
