package workload

import (
	"strings"
	"testing"

	"schedplay/engine/knob"
)

// The noise workload's per-CPU kworkers are kernel threads (no mm: no
// mm_switch, never held by SMT_NICE); its daemons are user processes.
func TestNoiseKworkersAreKernelThreads(t *testing.T) {
	tp := small(t, 1, 4, 2, 4, "interleaved")
	s := buildSim(t, tp, knob.Defaults(), 1, false, "noise:daemons=2")
	var kw, dm int
	for _, tk := range workloadTasks(s, 0) {
		switch {
		case strings.HasPrefix(tk.Name, "kworker/"):
			kw++
			if !tk.Kthread() {
				t.Errorf("%s is not a kernel thread", tk.Name)
			}
		case strings.HasPrefix(tk.Name, "daemon/"):
			dm++
			if tk.Kthread() {
				t.Errorf("%s is a kernel thread, want a user process", tk.Name)
			}
		}
	}
	if kw != tp.NCPU || dm != 2 {
		t.Fatalf("%d kworkers and %d daemons, want %d and 2", kw, dm, tp.NCPU)
	}
}
