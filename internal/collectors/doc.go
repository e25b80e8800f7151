// Package collectors holds the controller's and the runners' Prometheus collectors: the
// object gauges (claims and managed resources by condition, each series from one
// replica), the engine's terraform and warm-provider figures, the terraform runs, and
// the runs sent to runner pools.
package collectors
