package engine

import (
	"testing"

	"schedplay/engine/cpumask"
)

func hog() Program { return ProgramFunc(func(*Ctx) Action { return Run(1 << 40) }) }

func spawnOn(t *testing.T, s *Sim, w WorkloadID, name string, cpu, nice int, p Program) *Task {
	t.Helper()
	id, err := s.Spawn(w, TaskSpec{Name: name, Nice: nice, Allowed: cpumask.Of(s.topo.NCPU, cpu), ParentCPU: cpu, Program: p, MeasureWakeups: true})
	if err != nil {
		t.Fatal(err)
	}
	return s.tasks[id]
}

// CFS shares a CPU by weight: two nice-0 hogs get half each; nice 0 against
// nice 5 gets 1024:335 (kernel-reference.md §2.1).
func TestCFSSharesByWeight(t *testing.T) {
	for _, c := range []struct {
		niceA, niceB int
		want         float64
	}{{0, 0, 1}, {0, 5, 1024.0 / 335}, {-3, 2, 1991.0 / 655}} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1)
		s.debug = true
		w := s.AddWorkload("hogs", "hog")
		a := spawnOn(t, s, w, "a", 0, c.niceA, hog())
		b := spawnOn(t, s, w, "b", 0, c.niceB, hog())
		s.RunUntil(5 * Second)
		s.updateCurr(s.cpus[0])
		got := float64(a.sumExec) / float64(b.sumExec)
		if got < c.want*0.97 || got > c.want*1.03 {
			t.Errorf("nice %d vs %d: CPU time ratio %.3f, want %.3f", c.niceA, c.niceB, got, c.want)
		}
	}
}

// Tick preemption: two hogs on one CPU of a 2-CPU machine (factor
// 1+ilog2(2) = 2, sched_latency 12 ms) switch every ideal slice of 6 ms,
// rounded up to the 1 ms tick.
func TestTickPreemptionSlice(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1)
	lat, _, _ := s.TimeSlices()
	if lat != 12*Millisecond {
		t.Fatalf("scaled latency %d, want 12 ms", lat)
	}
	w := s.AddWorkload("hogs", "hog")
	spawnOn(t, s, w, "a", 0, 0, hog())
	spawnOn(t, s, w, "b", 0, 0, hog())
	s.RunUntil(Second)
	sw := s.stats.ctxSwitches
	// 1 s / 6-7 ms per slice ≈ 143..167 switches.
	if sw < 130 || sw > 180 {
		t.Fatalf("%d context switches in 1 s, want ~150 (6 ms slices)", sw)
	}
}

// Wakeup preemption: a task that sleeps 10 ms and runs 100 µs preempts a
// hog on its CPU as soon as it wakes (its vruntime, placed half a latency
// behind, leads by more than the wakeup granularity). Without
// WAKEUP_PREEMPTION it waits for the next tick, where check_preempt_tick
// finds the hog more than an ideal slice ahead of it.
func TestWakeupPreemption(t *testing.T) {
	run := func(preempt string) int64 {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "WAKEUP_PREEMPTION", preempt, "IDLE_STATES", "false")
		w := s.AddWorkload("mix", "mix")
		spawnOn(t, s, w, "hog", 0, 0, hog())
		step := 0
		spawnOn(t, s, w, "sleeper", 0, 0, ProgramFunc(func(*Ctx) Action {
			step++
			if step%2 == 1 {
				return Run(100 * Microsecond)
			}
			return Sleep(10 * Millisecond)
		}))
		s.RunUntil(2 * Second)
		return s.workloads[w].wakeLat.Summarize().P99
	}
	on, off := run("true"), run("false")
	if on > 50 {
		t.Errorf("with wakeup preemption p99 = %d us, want a few us", on)
	}
	if off < 500 || off > 1100 {
		t.Errorf("without wakeup preemption p99 = %d us, want up to one 1 ms tick", off)
	}
}

// sched_nr_latency is DIV_ROUND_UP(sched_latency, min_granularity) when a
// sysctl is written (sched_proc_update_handler): the tuned 10 ms minimum
// granularity against a 24 ms latency (×4 on 8+ CPUs) gives 3, not 2, so
// the period stretches only from the fourth task on.
func TestNrLatencyRoundsUp(t *testing.T) {
	s := newSim(t, smallSpec(1, 4, 2, 4, "interleaved"), 1, "sched_min_granularity_ns", "2500000")
	if s.nrLatency != 3 {
		t.Fatalf("sched_nr_latency %d for latency %d / min granularity %d, want 3", s.nrLatency, s.latencyNS, s.minGranNS)
	}
	if got, want := s.schedPeriod(3), s.latencyNS; got != want {
		t.Fatalf("period of 3 tasks %d, want the latency %d", got, want)
	}
	if got, want := s.schedPeriod(4), 4*s.minGranNS; got != want {
		t.Fatalf("period of 4 tasks %d, want 4 minimum granularities %d", got, want)
	}
	if d := newSim(t, smallSpec(1, 4, 2, 4, "interleaved"), 1); d.nrLatency != 8 {
		t.Fatalf("default sched_nr_latency %d, want 8", d.nrLatency)
	}
}

// enqueue_entity (ENQUEUE_MIGRATED) renormalises a migrated wakee after
// update_curr: its vruntime relative to its old runqueue is added to this
// runqueue's min_vruntime as update_curr just advanced it, not as it was
// before curr's latest run was charged.
func TestMigratedWakeeRenormalisedAfterUpdateCurr(t *testing.T) {
	for _, era := range []string{"5.2", "6.1"} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", era)
		w := s.AddWorkload("hog", "hog")
		spawnOn(t, s, w, "hog", 0, 0, hog())
		s.RunUntil(s.now + 5*Millisecond + 1500*Microsecond)
		c := s.cpus[0]
		before := c.minVruntime
		p := sleeper(s, "p", 1)
		const rel = 10 * Millisecond
		p.vruntime = s.cpus[1].minVruntime + rel
		s.class.enqueueTaskWakeup(c, p)
		if c.minVruntime <= before {
			t.Fatalf("era %s: update_curr did not advance min_vruntime (%d, %d): the test shows nothing", era, before, c.minVruntime)
		}
		if p.vruntime != c.minVruntime+rel {
			t.Fatalf("era %s: migrated wakee at vruntime %d, want min_vruntime after update_curr %d + %d = %d (before it: %d)",
				era, p.vruntime, c.minVruntime, rel, c.minVruntime+rel, before+rel)
		}
	}
}
