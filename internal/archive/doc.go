// Package archive reads and writes the tar archives Terraplane ships files in (stack
// packages, OCI module artifacts, module trees in ConfigMaps). Reading refuses anything
// that could escape or exhaust the reader: links, special files, paths that leave the
// archive, duplicates and anything over the caller's limits.
package archive
