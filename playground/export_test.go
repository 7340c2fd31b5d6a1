package playground

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/trace"
)

// The exported trace covers the window asked for and nothing before it,
// in both formats.
func TestExportTraceOfTheLastMilliseconds(t *testing.T) {
	st := Default()
	// At 100-120 ms arm B's workers were between slices (one slice before
	// MWAIT wakeups stopped paying an IPI, none after): a window in the
	// steady state holds dozens.
	now := 300 * engine.Millisecond
	var b bytes.Buffer
	stats, err := ExportTrace(st, 1, now, 20*engine.Millisecond, trace.FormatJSON, &b)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph string  `json:"ph"`
			Ts float64 `json:"ts"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	slices := 0
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			slices++
			if e.Ts < 280e3-1 || e.Ts > 300e3 {
				t.Fatalf("a slice at %v µs, outside [280, 300) ms", e.Ts)
			}
		}
	}
	if slices == 0 || stats.Events == 0 {
		t.Fatalf("no slices in the window (%+v)", stats)
	}
	b.Reset()
	if _, err := ExportTrace(st, 0, now, 40*engine.Millisecond, trace.FormatFtrace, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "sched_switch:") {
		t.Fatalf("ftrace text without sched_switch: %.200s", b.String())
	}
	if _, err := ExportTrace(st, 0, now, 0, trace.FormatJSON, &b); err == nil {
		t.Fatal("an empty window was accepted")
	}
}
