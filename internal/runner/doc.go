// Package runner runs terraform for the Terraform Connector, in one of two ways: Local,
// the engine in the controller's own process, or Pools, which send each run to the
// runner of the workspace's pool (`terraplane runner`): a process with an identity of its
// own that reaches only the state of the namespaces it serves, and keeps that pool's warm
// provider processes. The runner side is Server; Client speaks to one runner, over an
// authenticated local socket.
package runner
