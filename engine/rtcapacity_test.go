package engine

import (
	"testing"

	"schedplay/engine/cpumask"
)

// scale_rt_capacity (v5.2.1, 6.1, 6.12 fair.c): SCHED_CAPACITY_SCALE less
// avg_rt and avg_dl util_avg, 1 once they reach it; update_cpu_capacity
// keeps it at least 1.
func TestScaleRTCapacity(t *testing.T) {
	for _, c := range []struct{ rt, dl, want int64 }{
		{0, 0, 1024}, {100, 0, 924}, {0, 100, 924}, {300, 200, 524},
		{1023, 0, 1}, {1024, 0, 1}, {512, 512, 1}, {2000, 0, 1},
	} {
		if got := scaleRTCapacity(c.rt, c.dl); got != c.want {
			t.Errorf("scale_rt_capacity(avg_rt %d, avg_dl %d) = %d, want %d", c.rt, c.dl, got, c.want)
		}
	}
}

// rtCapSim is a 2-CPU machine whose CPU 0 runs an RT task 90% of the
// time (9 ms running, 1 ms asleep), with one fair hog started on CPU 0
// and free to run on either CPU.
func rtCapSim(t *testing.T, era string, full bool) (*Sim, *Task) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
	s.debug = true
	s.capFull = full
	w := s.AddWorkload("mix", "mix")
	spawnRT(t, s, w, "rt", 0, cpumaskOf(s, 0), PolicyFIFO, 50, periodic(9*Millisecond, Millisecond))
	hog := spawnOn(t, s, w, "hog", 0, 0, hog())
	if err := s.SetAffinity(hog.ID, cpumaskOf(s, 0, 1)); err != nil {
		t.Fatal(err)
	}
	return s, hog
}

// avg_rt follows PELT's ramp: CPU 0's capacity as the balancer stores it
// (rq->cpu_capacity, refreshed by update_cpu_capacity at CPU 0's own
// balance passes) is still near 1024 after a few ms of RT time, then falls
// to about 10% of 1024 once avg_rt has converged, and equals
// scale_rt_capacity of the signals as they were at that refresh. CPU 1,
// which never runs RT, keeps 1024.
func TestRTCapacityRamp(t *testing.T) {
	for _, era := range []string{"5.2", "6.6"} {
		s, _ := rtCapSim(t, era, false)
		s.RunUntil(6 * Millisecond)
		if c := s.CPUCapacity(0); c < 800 {
			t.Errorf("era %s: capacity_of(0) = %d after 6 ms, want still near 1024 (PELT ramp)", era, c)
		}
		s.RunUntil(600 * Millisecond)
		// Refresh as update_group_capacity at the lowest level does.
		c0 := s.cpus[0]
		env := s.newLBEnv(c0, 0, cpuIdle, c0, s.now)
		s.updateGroupCapacity(&env)
		rt := s.RTUtil(0)
		got := s.CPUCapacity(0)
		if want := max(1, 1024-rt); got != want {
			t.Errorf("era %s: capacity_of(0) = %d, want 1024 - avg_rt (%d) = %d", era, got, rt, want)
		}
		if got < 40 || got > 200 {
			t.Errorf("era %s: capacity_of(0) = %d (avg_rt %d) after 600 ms of 90%% RT, want about 10%% of 1024", era, got, rt)
		}
		if sg := s.groupCapacity(s.topo.Domains[0][0].Level, 0, 1); sg != got {
			t.Errorf("era %s: CPU 0's sgc->capacity = %d, want its capacity %d", era, sg, got)
		}
		if c := s.CPUCapacity(1); c != 1024 {
			t.Errorf("era %s: capacity_of(1) = %d, want 1024 (no RT there)", era, c)
		}
		t.Logf("era %s: after 600 ms: avg_rt(0) %d, capacity_of(0) %d, capacity_of(1) %d", era, rt, got, s.CPUCapacity(1))
	}
}

// The balancer's decision changes with the capacity it sees. Since
// "sched/fair: fix case with reduced capacity CPU" (v6.0; 6.1 and 6.12
// update_sg_lb_stats, sched_reduced_capacity, need_active_balance), an
// idle CPU 1 classifies CPU 0 — one fair task, capacity reduced by RT time
// past imbalance_pct — as group_misfit_task and pulls the hog (migrate_load
// of its load, or the active balance's stopper when the hog is running):
// it then runs on CPU 1 nearly all the time. With every capacity at 1024
// (the model before) CPU 0 is group_fully_busy with one task against an
// idle CPU: balanced, the hog stays with the RT task and gets ~10% of a
// CPU. v5.2's balancer has no such case (a lone fair task on a CPU with
// reduced capacity against an idle CPU is balanced: its group is neither
// overloaded nor misfit without SD_ASYM_CPUCAPACITY), so there the hog
// stays either way.
func TestRTCapacityMovesFairTask(t *testing.T) {
	const runFor = 2 * Second
	for _, c := range []struct {
		era   string
		moves bool
	}{{"6.1", true}, {"6.6", true}, {"6.12", true}, {"5.2", false}} {
		share := func(full bool) (execMS int64, cpu int, capacity int64) {
			s, hog := rtCapSim(t, c.era, full)
			s.RunUntil(runFor)
			s.updateCurr(s.cpus[hog.cpu])
			return hog.sumExec / Millisecond, hog.cpu, s.CPUCapacity(0)
		}
		before, beforeCPU, beforeCap := share(true)
		after, afterCPU, afterCap := share(false)
		t.Logf("era %s: hog's CPU time in %d ms: %d ms on CPU %d (capacity_of(0) %d) -> %d ms on CPU %d (capacity_of(0) %d)",
			c.era, runFor/Millisecond, before, beforeCPU, beforeCap, after, afterCPU, afterCap)
		if beforeCPU != 0 || before > runFor/Millisecond/5 {
			t.Errorf("era %s: with capacity 1024 the hog ran %d ms and ended on CPU %d, want ~10%% on CPU 0", c.era, before, beforeCPU)
		}
		if !c.moves {
			if afterCPU != 0 || after > runFor/Millisecond/5 {
				t.Errorf("era %s: with reduced capacity the hog ran %d ms and ended on CPU %d, want it left on CPU 0 (~10%%)", c.era, after, afterCPU)
			}
			continue
		}
		if afterCPU != 1 || after < runFor/Millisecond*7/10 {
			t.Errorf("era %s: with reduced capacity the hog ran %d ms and ended on CPU %d, want it moved to CPU 1 (> 70%% of the run)", c.era, after, afterCPU)
		}
	}
}

// In a run without RT or deadline tasks the class signals are not kept
// and every capacity is exactly 1024.
func TestFairOnlyCapacity(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false")
	w := s.AddWorkload("hogs", "hog")
	spawnOn(t, s, w, "a", 0, 0, hog())
	if _, err := s.Spawn(w, TaskSpec{Name: "b", Allowed: cpumask.Mask{}, ParentCPU: 0, Program: periodic(Millisecond, Millisecond)}); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(500 * Millisecond)
	for i := range s.cpus {
		if c := s.CPUCapacity(i); c != 1024 || s.cap.sgCap != nil {
			t.Errorf("CPU %d: capacity %d (cache built: %v), want 1024 and no cache", i, c, s.cap.sgCap != nil)
		}
	}
}

// v5.2's find_busiest_group divides each group's load by its
// sgc->capacity: with two fair hogs, one per CPU, CPU 0's reduced
// capacity makes its avg_load about ten times CPU 1's, so CPU 1's periodic
// balance pulls CPU 0's hog (find_busiest_queue: nr_running 2 with the RT
// task), and CPU 0, idle in the RT task's gaps, pulls one back: the hogs
// take turns with the RT task and share the CPU time about equally. With
// every capacity at 1024 the loads are equal, nothing moves, and the hog
// left with the RT task gets ~10% of a CPU against the other's 100%.
func TestRTCapacityV52Shares(t *testing.T) {
	run := func(full bool) (ms [2]int64, migr int) {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "5.2", "IDLE_STATES", "false")
		s.debug = true
		s.capFull = full
		w := s.AddWorkload("mix", "mix")
		spawnRT(t, s, w, "rt", 0, cpumaskOf(s, 0), PolicyFIFO, 50, periodic(9*Millisecond, Millisecond))
		hogs := [2]*Task{spawnOn(t, s, w, "a", 0, 0, hog()), spawnOn(t, s, w, "b", 1, 0, hog())}
		for _, h := range hogs {
			if err := s.SetAffinity(h.ID, cpumaskOf(s, 0, 1)); err != nil {
				t.Fatal(err)
			}
		}
		s.RunUntil(3 * Second)
		for i, h := range hogs {
			s.updateCurr(s.cpus[h.cpu])
			ms[i] = h.sumExec / Millisecond
			migr += int(h.migrations)
		}
		return ms, migr
	}
	before, bm := run(true)
	after, am := run(false)
	t.Logf("v5.2, 3 s: hogs' CPU time %v ms (%d migrations) with capacity 1024 -> %v ms (%d migrations) with reduced capacity", before, bm, after, am)
	if min(before[0], before[1]) > 500 || bm != 0 {
		t.Errorf("capacity 1024: hogs ran %v ms with %d migrations, want one stuck with the RT task (~300 ms) and none", before, bm)
	}
	if min(after[0], after[1]) < 1200 || am < 10 {
		t.Errorf("reduced capacity: hogs ran %v ms with %d migrations, want both above 1200 ms, taking turns", after, am)
	}
}

// avg_dl takes its share the same way: a deadline task running 7 ms of
// every 10 ms on its CPU (runtime 8 ms per 10 ms period) leaves that CPU's
// capacity_of about 30% of 1024, and in 6.12 the idle other CPU pulls the fair hog off it
// (group_misfit_task). The fair server's own time (6.12) is fair time: a
// run with an RT task only keeps avg_dl at 0.
func TestDLCapacity(t *testing.T) {
	for _, era := range []string{"5.2", "6.12"} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		// A deadline task cannot be pinned: it stays where fork
		// placement put it (alone in its class, nothing pushes it).
		id, err := s.Spawn(w, TaskSpec{Name: "dl", ParentCPU: 0, Program: periodic(7*Millisecond, 3*Millisecond),
			Policy: PolicyDeadline, DL: DLParams{Runtime: 8 * Millisecond, Period: 10 * Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		x := s.tasks[id].cpu
		hog := spawnOn(t, s, w, "hog", x, 0, hog())
		if err := s.SetAffinity(hog.ID, cpumaskOf(s, 0, 1)); err != nil {
			t.Fatal(err)
		}
		s.RunUntil(Second)
		if s.tasks[id].cpu != x {
			t.Fatalf("era %s: the deadline task moved from CPU %d to %d", era, x, s.tasks[id].cpu)
		}
		dl, cx := s.DLUtil(x), s.CPUCapacity(x)
		t.Logf("era %s: avg_dl(%d) %d, avg_rt %d, capacity_of %d, hog on CPU %d", era, x, dl, s.RTUtil(x), cx, hog.cpu)
		if dl < 550 || dl > 850 || cx < 150 || cx > 480 || s.RTUtil(x) != 0 {
			t.Errorf("era %s: avg_dl(%d) %d, avg_rt %d, capacity_of %d; want avg_dl ~700, no RT, capacity ~300", era, x, dl, s.RTUtil(x), cx)
		}
		if want := map[string]int{"5.2": x, "6.12": 1 - x}[era]; hog.cpu != want {
			t.Errorf("era %s: the hog ended on CPU %d, want %d", era, hog.cpu, want)
		}
	}
	s, _ := rtCapSim(t, "6.12", false)
	s.RunUntil(Second)
	for i := range s.cpus {
		if d := s.DLUtil(i); d != 0 {
			t.Errorf("6.12 with an RT task and the fair server: avg_dl(%d) = %d, want 0 (the server's time is fair time)", i, d)
		}
	}
}
