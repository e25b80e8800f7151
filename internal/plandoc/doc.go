// Package plandoc holds a Terraform plan as plan policies and reviewers may see it:
// terraform's resource changes with every sensitive value, and every text of a secret,
// redacted. It imports nothing of Kubernetes, so the engine can make the document.
package plandoc
