// Package claimcrd builds the CustomResourceDefinitions of a claim kind defined at run
// time: the namespaced claim kind with the parameters schema of its ClaimDefinition, and
// its cluster-scoped portable class kind. controllers/claimdefinition applies them; tests
// make a defined kind with them without running that controller.
package claimcrd
