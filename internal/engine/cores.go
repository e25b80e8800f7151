package engine

import (
	"runtime"
	"strconv"
)

// terraformEnv is the environment of ws's terraform processes, taken once their slot
// is: e.env's, with GOMAXPROCS set to the process's share of the cores among the slots
// in use (coresPerProcess) unless ws.Env sets it. The warm providers are keyed by e.env
// alone, so the share never splits them.
func (e *Engine) terraformEnv(ws Workspace) map[string]string {
	env := e.env(ws)
	if _, set := ws.Env["GOMAXPROCS"]; !set {
		env["GOMAXPROCS"] = strconv.Itoa(coresPerProcess(runtime.GOMAXPROCS(0), len(e.slots)))
	}
	return env
}

// coresPerProcess is how many cores one of running terraform processes may use of the
// cores this process may (runtime.GOMAXPROCS, which follows a container's CPU limit):
// an even share, at least one. Terraform sizes its scheduler and its garbage collector's
// workers by the host's CPUs when left to itself (a Go program built before Go 1.25 does
// not read the container's limit), and ten processes on two cores each sized for both
// spent 12–17 % more CPU than each sized for one.
func coresPerProcess(cores, running int) int {
	return max(1, cores/max(1, running))
}
