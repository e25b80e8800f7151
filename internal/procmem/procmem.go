package procmem

import (
	"os"
	"strconv"
	"strings"
)

// RSS reads the resident memory of process pid, in bytes, from /proc/<pid>/statm (its
// second field, in pages); false when the process is gone or its memory unreadable.
func RSS(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, false
	}
	return parseStatm(b, os.Getpagesize())
}

// parseStatm reads the resident set size, in bytes, out of a /proc/<pid>/statm line.
func parseStatm(statm []byte, pageSize int) (uint64, bool) {
	fields := strings.Fields(string(statm))
	if len(fields) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(pageSize), true
}
