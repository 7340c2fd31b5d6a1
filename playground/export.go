package playground

import (
	"fmt"
	"io"
	"time"

	"schedplay/engine"
	"schedplay/trace"
)

// Exporting a trace of the last simulated milliseconds. A trace attaches
// to an engine before it runs, so the page replays the arm: it builds it
// again from the link (the same engine, the same seed: the same run,
// event for event) with the trace writing only the window [now-window,
// now), and runs it to now.

// MaxTraceWindow bounds the window an export may ask for.
const MaxTraceWindow = 10 * engine.Second

// MaxTraceBytes caps an exported trace (uncompressed).
const MaxTraceBytes = 64 << 20

// ExportTrace writes arm's trace of [now-window, now) in format f to w.
func ExportTrace(st State, arm int, now, window int64, f trace.Format, w io.Writer) (trace.Stats, error) {
	if window <= 0 || window > MaxTraceWindow {
		return trace.Stats{}, fmt.Errorf("trace window %v out of range (allowed: (0, %v])", time.Duration(window), time.Duration(MaxTraceWindow))
	}
	a, err := BuildArm(st, arm, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		return trace.Stats{}, err
	}
	tw, err := trace.Open(a.Sim, w, f, trace.Options{Start: max(0, now-window), End: now, MaxBytes: MaxTraceBytes})
	if err != nil {
		return trace.Stats{}, err
	}
	a.Sim.RunUntil(now)
	if err := tw.Close(); err != nil {
		return tw.Stats(), err
	}
	return tw.Stats(), nil
}
