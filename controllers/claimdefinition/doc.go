// Package claimdefinition serves ClaimDefinitions: it generates the claim and portable
// class CustomResourceDefinitions of a defined kind (the claim's parameters from a
// module's variables, or written out), refuses changes that would break existing claims,
// applies them, and once they are Established registers the kind, so the claim
// reconciler serves it. A definition is not deleted while claims of its kind exist.
package claimdefinition
