package holder

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcessStart reads when process pid started, in clock ticks after boot.
func ProcessStart(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.start, err
}

// stat is what a lock holder's check needs of /proc/<pid>/stat.
type stat struct {
	start  uint64 // field 22: clock ticks after boot
	exited bool   // state Z (zombie) or X (dead)
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

// parseStat reads a /proc/<pid>/stat line, whose command name may hold spaces and
// parentheses.
func parseStat(line []byte) (stat, error) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("unreadable process status")
	}
	fields := strings.Fields(string(line[i+1:]))
	const startField = 22 - 3 // fields 1 and 2 (pid, comm) precede the ')'; state is field 3
	if len(fields) <= startField {
		return stat{}, fmt.Errorf("unreadable process status")
	}
	start, err := strconv.ParseUint(fields[startField], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("unreadable process start: %w", err)
	}
	return stat{start: start, exited: fields[0] == "Z" || fields[0] == "X"}, nil
}

// readTrimmed reads a one-line file, blank when it cannot.
func readTrimmed(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}
