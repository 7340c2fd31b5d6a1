//go:build linux

package detect

import (
	"bytes"
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMeasureShort runs every microbenchmark on this machine with a tiny
// budget. Figures depend on the machine and its load, so it checks only
// that each one that was taken is positive and finite, that the costs
// written carry a "measured" note, and that the preset still loads and
// runs.
func TestMeasureShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the measured run pins threads and spins for about a second")
	}
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu here")
	}
	fsys, err := Open("/")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Detect(fsys, Options{Name: "this-box"})
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	start := time.Now()
	m, err := Measure(context.Background(), r, MeasureOptions{Budget: 60 * time.Millisecond, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f s:\n%s", time.Since(start).Seconds(), progress.String())
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("a 60 ms budget per figure took %v", el)
	}
	all := []Figure{m.NullSyscall, m.Yield, m.FutexSame, m.FutexSamePreempt, m.FutexWaker, m.FutexIdle, m.FutexBusy}
	all = append(append(all, m.Pipe...), m.Line...)
	for _, f := range all {
		if f.What == "" || f.Err != "" {
			continue // not taken here, or not possible (said in the notes)
		}
		for _, v := range []float64{f.NS, f.P10, f.P90} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("%s: figure %v not positive and finite", f, v)
			}
		}
	}
	if !m.NullSyscall.OK() || len(m.Pipe) == 0 || !m.Pipe[0].OK() {
		t.Errorf("the null syscall or the same-CPU pipe round trip was not measured: %s / %v", m.NullSyscall, m.Pipe)
	}
	if !strings.Contains(progress.String(), "detect: [1/") {
		t.Errorf("no progress lines: %q", progress.String())
	}
	Apply(r.Spec, m)
	measured := 0
	for k, note := range r.Spec.CostNotes {
		if strings.HasPrefix(note, "measured by schedsim machine detect on ") {
			measured++
			if r.Spec.Costs[k] < 0 {
				t.Errorf("%s = %d", k, r.Spec.Costs[k])
			}
		}
	}
	if measured == 0 {
		t.Errorf("no cost was written as measured: %v", r.Spec.CostNotes)
	}
	loadsAndRuns(t, r)
}
