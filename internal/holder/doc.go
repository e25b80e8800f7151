// Package holder names a process precisely enough to tell, later and from another
// process, whether it is gone: the identity a state lock records of its holder, and the
// environment mark that lets the processes a dead holder left running be found and
// stopped. It imports no Kubernetes package, so the engine can mark its children with it.
package holder
