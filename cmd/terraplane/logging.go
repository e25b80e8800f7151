package main

import (
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
		ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel), zap.ConsoleEncoder(), zap.StacktraceLevel(zapcore.PanicLevel)))
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
