// Package stackpkg is the stack package format: the seed's .registry/ layout (app.yaml,
// install.yaml, icons, ui-schema.yaml, resources/** with group.yaml, *resource.yaml,
// kind-prefixed *.icon.* and *.ui-schema.yaml, and *crd.yaml) plus Terraplane's
// terraform/ directory (modules and classes). Packages travel as single-layer OCI
// images built, pushed and pulled in-process with go-containerregistry; an index
// artifact in the same registry maps CRDs to the packages that own them.
package stackpkg
