package ui

import (
	"math"
	"testing"

	"schedplay/engine"
	"schedplay/playground"
)

func running(q int) engine.CPUView { return engine.CPUView{Curr: 1, Workload: 0, Queued: q} }
func idleCPU() engine.CPUView      { return engine.CPUView{Curr: -1, Workload: -1, Idle: true} }

// mask is a PinnedTask's affinity over the given CPUs.
func pinnedOn(cpu int, allowed ...int) playground.PinnedTask {
	p := playground.PinnedTask{CPU: cpu, Allowed: make([]uint64, 1)}
	for _, c := range allowed {
		p.Allowed[c/64] |= 1 << uint(c%64)
	}
	return p
}

func TestConservationCountsOnlyWhatAffinityAllows(t *testing.T) {
	// CPU 0 runs a task with one more waiting; CPUs 1-3 idle.
	views := []engine.CPUView{running(1), idleCPU(), idleCPU(), idleCPU()}

	// The waiting task may run anywhere: every idle CPU could take it.
	c := CountConservation(views, nil)
	if c.Idle != 3 || c.Starved != 3 || c.Waiting != 1 || c.Running != 1 || !c.NotConserving() {
		t.Errorf("free task: %+v", c)
	}
	// Pinned to CPU 0: no idle CPU may run it; work is conserved.
	c = CountConservation(views, []playground.PinnedTask{pinnedOn(0, 0)})
	if c.Starved != 0 || c.NotConserving() || c.Waiting != 1 {
		t.Errorf("pinned task: %+v", c)
	}
	// Allowed on CPUs 0 and 2: only CPU 2 counts.
	c = CountConservation(views, []playground.PinnedTask{pinnedOn(0, 0, 2)})
	if c.Starved != 1 {
		t.Errorf("task allowed on 0 and 2: %+v", c)
	}
	// Two waiting on CPU 0, one pinned there: the free one makes every
	// idle CPU count.
	views[0] = running(2)
	c = CountConservation(views, []playground.PinnedTask{pinnedOn(0, 0)})
	if c.Starved != 3 || c.Waiting != 2 {
		t.Errorf("one pinned, one free: %+v", c)
	}
}

func TestConservationWakingIsItsOwnState(t *testing.T) {
	// CPU 1 is leaving its C-state for the task enqueued on it; CPU 2 has
	// been claimed by a waker (not available_idle_cpu, nothing queued yet).
	waking := engine.CPUView{Curr: -1, Workload: -1, Queued: 1}
	claimed := engine.CPUView{Curr: -1, Workload: -1}
	views := []engine.CPUView{running(0), waking, claimed, idleCPU()}
	c := CountConservation(views, nil)
	if c.Waking != 2 || c.Idle != 1 || c.Waiting != 0 || c.Starved != 0 || c.NotConserving() {
		t.Errorf("waking CPUs are neither idle nor holding waiting work: %+v", c)
	}
	// A second task on the waking CPU does wait: the idle CPU could run it.
	views[1].Queued = 2
	c = CountConservation(views, nil)
	if c.Waiting != 1 || c.Starved != 1 {
		t.Errorf("two tasks on a waking CPU: %+v", c)
	}
	// SMT-held work waits too.
	views[1] = engine.CPUView{Curr: -1, Workload: -1, Queued: 1, SMTHeld: true}
	c = CountConservation(views, nil)
	if c.SMTHeld != 1 || c.Waiting != 1 || c.Starved != 1 {
		t.Errorf("SMT-held: %+v", c)
	}
}

func TestConservationLargeMachine(t *testing.T) {
	// 512 CPUs: 511 idle, CPU 300 runs one and holds a task pinned to
	// CPUs 300 and 400.
	views := make([]engine.CPUView, 512)
	for i := range views {
		views[i] = idleCPU()
	}
	views[300] = running(1)
	p := playground.PinnedTask{CPU: 300, Allowed: make([]uint64, 8)}
	p.Allowed[300/64] |= 1 << (300 % 64)
	p.Allowed[400/64] |= 1 << (400 % 64)
	c := CountConservation(views, []playground.PinnedTask{p})
	if c.Idle != 511 || c.Starved != 1 {
		t.Errorf("512 CPUs: %+v", c)
	}
}

func TestSeriesRatesAndStates(t *testing.T) {
	a := NewArmSeries()
	a.Sample(engine.Totals{Now: 0}, []int64{0})
	a.AddState(1, Conservation{Starved: 2, Waking: 1})
	a.AddState(1, Conservation{Starved: 50}) // the same snapshot again: skipped
	a.AddState(2, Conservation{Starved: 0, Waking: 3})
	a.Sample(engine.Totals{Now: engine.Second / 2, SISCalls: 10, SISProbes: 40}, []int64{500})
	if a.Probes.Last() != 4 || a.Ops[0].Last() != 1000 || a.T.Last() != 0.5 || a.Starved.Last() != 1 || a.Waking.Last() != 2 {
		t.Errorf("probes %v ops %v t %v starved %v waking %v", a.Probes.Last(), a.Ops[0].Last(), a.T.Last(), a.Starved.Last(), a.Waking.Last())
	}
	a.Sample(engine.Totals{Now: engine.Second, SISCalls: 10, SISProbes: 40}, []int64{500})
	if !math.IsNaN(a.Probes.Last()) || !math.IsNaN(a.Starved.Last()) {
		t.Error("an interval without select_idle_cpu calls or snapshots has no figure")
	}
	if iv := SampleInterval(1); iv != 100*engine.Millisecond {
		t.Errorf("SampleInterval(1) = %d", iv)
	}
	if iv := SampleInterval(0.0007); iv != 100*engine.Microsecond {
		t.Errorf("SampleInterval(0.0007) = %d", iv)
	}
}

// The canvas counts every frame: without pinned tasks it allocates
// nothing, even on 512 CPUs.
func TestConservationDoesNotAllocate(t *testing.T) {
	views := make([]engine.CPUView, 512)
	for i := range views {
		views[i] = idleCPU()
	}
	views[7] = running(3)
	n := testing.AllocsPerRun(50, func() {
		c := CountConservation(views, nil)
		_ = Classify(&views[7], false, 1, 3)
		if c.Starved != 511 {
			t.Fatal(c)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per count", n)
	}
}
