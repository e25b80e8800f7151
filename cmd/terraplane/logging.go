package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// logOptions are the controller's zap flags (--zap-log-level, --zap-encoder, ...).
var logOptions zap.Options

// debugLogs is the controller's --debug: shorthand for --zap-log-level=debug.
var debugLogs bool

// devLogFormat is dev's --log-format: text (progress and events for a person, errors
// only from the logs) or json (every log line, for machines).
var devLogFormat = "text"

// setupLogging gives the commands that run controllers their logger, and every other
// command none: a tool speaks to its user through its output, not through log lines.
// controller-runtime takes the first logger it is given, so this runs once, before any
// command's own code.
func setupLogging(cmd *cobra.Command, _ []string) {
	switch {
	case cmd.Name() == "dev" && devLogFormat != "json":
		ctrl.SetLogger(logr.New(&devSink{out: os.Stderr, mu: &sync.Mutex{}}))
		klog.SetLogger(logr.Discard())
	case cmd.Name() == "controller" || cmd.Name() == "stack-manager" || cmd.Name() == "dev" || cmd.Name() == "runner":
		if debugLogs {
			logOptions.Level = zapcore.DebugLevel
		}
		ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOptions)))
	default:
		ctrl.SetLogger(logr.Discard())
		klog.SetLogger(logr.Discard())
	}
}

// devSink is the log of `terraplane dev` in text mode: errors only, one line each, as a
// person reads them. A reconciler's error is left out: the object's conditions and the
// event dev prints say it once, where the log would repeat it at every retry.
type devSink struct {
	out  io.Writer
	name string
	mu   *sync.Mutex
}

// Init is part of logr.LogSink.
func (s *devSink) Init(logr.RuntimeInfo) {}

// Enabled: no info lines.
func (s *devSink) Enabled(int) bool { return false }

// Info prints nothing.
func (s *devSink) Info(int, string, ...any) {}

// Error prints one line: time, "!", where, what and why.
func (s *devSink) Error(err error, msg string, _ ...any) {
	if msg == "Reconciler error" {
		return
	}
	line := msg
	if s.name != "" {
		line = s.name + ": " + line
	}
	if err != nil {
		line += ": " + strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	if s.mu != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	fmt.Fprintf(s.out, "%s ! %s\n", time.Now().Format("15:04:05"), line)
}

// WithValues keeps the sink: values are left out of the one line.
func (s *devSink) WithValues(...any) logr.LogSink { return s }

// WithName names the component in the line.
func (s *devSink) WithName(name string) logr.LogSink {
	n := *s
	if n.name != "" {
		name = n.name + "." + name
	}
	n.name = name
	return &n
}
