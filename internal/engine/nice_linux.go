package engine

import (
	"runtime"
	"sync"
	"syscall"
)

// atNice runs fn, which starts a process and waits for it, on a thread whose nice value
// is raised by nice: Linux keeps a nice value per thread, and a process inherits the one
// of the thread that starts it. A panic in fn is raised again in the caller's goroutine;
// a nice value the kernel refuses leaves the process at the caller's priority.
func atNice(nice int, fn func() error) error {
	if nice <= 0 {
		return fn()
	}
	var err error
	var panicked any
	lowered.run(nice, func() {
		defer func() { panicked = recover() }()
		err = fn()
	})
	if panicked != nil {
		panic(panicked)
	}
	return err
}

// lowered are the threads kept at each raised nice value.
var lowered = &niceThreads{idle: map[int][]chan func(){}}

// niceThreads keeps goroutines locked to threads whose nice value was raised, by the
// value, and lends them to the processes that should start at it. A raised thread can
// never be lowered again without privileges, so it is never given back to the Go
// scheduler; nor is it ever ended, since terraform-exec's processes are killed when the
// thread that started them ends (their parent-death signal).
type niceThreads struct {
	mu   sync.Mutex
	idle map[int][]chan func()
}

// run runs fn on an idle thread at nice, or on a new one.
func (n *niceThreads) run(nice int, fn func()) {
	n.mu.Lock()
	var w chan func()
	if l := n.idle[nice]; len(l) > 0 {
		w, n.idle[nice] = l[len(l)-1], l[:len(l)-1]
	}
	n.mu.Unlock()
	if w == nil {
		w = make(chan func())
		go niceWorker(nice, w)
	}
	done := make(chan struct{})
	w <- func() { defer close(done); fn() }
	<-done
	n.mu.Lock()
	n.idle[nice] = append(n.idle[nice], w)
	n.mu.Unlock()
}

// niceWorker locks itself to its thread for good, raises the thread's nice value by
// nice, and runs what it is given.
func niceWorker(nice int, jobs <-chan func()) {
	runtime.LockOSThread() // never unlocked: see niceThreads
	tid := syscall.Gettid()
	if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil {
		// the system call answers 20 - the nice value
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(maxNice, 20-prio+nice))
	}
	for job := range jobs {
		job()
	}
}
