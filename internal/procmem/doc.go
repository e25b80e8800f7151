// Package procmem reads how much memory a process holds, from /proc: the one reader the
// controller's metrics and the warm provider pool's memory budget share.
package procmem
