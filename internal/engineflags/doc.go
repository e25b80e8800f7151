// Package engineflags binds the terraform engine's settings that the controller and the
// runner share to command-line flags, in one place, and derives from them the arguments
// a runner is started with, so that a setting given to the controller reaches its
// runners.
package engineflags
