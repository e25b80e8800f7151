// Package migrate moves infrastructure between plain Terraform and Terraplane without
// recreating anything: Migrate takes a Terraform working directory (module and state) into
// Terraplane's custody as a static Module; Export hands a retained managed resource back as
// a directory where plain `terraform plan` shows no changes.
package migrate
