package engine

import (
	"testing"

	"schedplay/engine/cpumask"
)

// sched_yield (yield.go) and sched_setaffinity from a task's own program
// (Ctx.SetAffinity).

// twoHogsOneCPU runs two hogs on a one-CPU machine of era until both
// have run, and returns the sim, its CPU and the task running then.
func twoHogsOneCPU(t *testing.T, era string, n int) (*Sim, *cpu, []*Task) {
	t.Helper()
	s := newSim(t, smallSpec(1, 1, 1, 1, "interleaved"), 1, "era", era)
	w := s.AddWorkload("hogs", "test")
	var tasks []*Task
	for i := 0; i < n; i++ {
		id, err := s.Spawn(w, TaskSpec{Name: string(rune('a' + i)), Program: hog()})
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, s.tasks[id])
	}
	s.RunUntil(20 * Millisecond)
	return s, s.cpus[0], tasks
}

// With another task queued, yield_task_fair marks the yielder (CFS: the
// skip buddy, which the pick passes over; EEVDF: its deadline one slice
// later) and schedule() runs the other task. Alone, it changes nothing
// and the yielder goes on.
func TestYieldTaskFair(t *testing.T) {
	for _, era := range []string{"5.2", "6.1", "6.6", "6.12"} {
		s, c, tasks := twoHogsOneCPU(t, era, 2)
		if err := s.YieldModelled(); err != nil {
			t.Fatalf("era %s: %v", era, err)
		}
		a := c.curr
		s.settle(c)
		s.updateCurr(c)
		d0 := a.deadline
		other := tasks[0]
		if other == a {
			other = tasks[1]
		}
		// EEVDF picks only an eligible task: a yield cannot hand the CPU
		// to one that has run ahead of the average.
		want := other
		if era == "6.6" || era == "6.12" {
			if !s.entityEligible(c, other) {
				want = a
			}
		}
		a.act = Yield()
		s.yieldCurr(c, a)
		if c.curr != want {
			t.Errorf("era %s: %s runs after %s yielded; want %s", era, c.curr.Name, a.Name, want.Name)
		}
		switch era {
		case "5.2", "6.1":
			if c.skipBuddy != a {
				t.Errorf("era %s: skip buddy %v, want %s", era, c.skipBuddy, a.Name)
			}
		default:
			if want := d0 + calcDeltaFair(a.slice, a.weight); a.deadline != want {
				t.Errorf("era %s: deadline %d after yield, want %d (pushed one slice)", era, a.deadline, want)
			}
		}

		s, c, _ = twoHogsOneCPU(t, era, 1)
		a = c.curr
		s.settle(c)
		s.updateCurr(c)
		d0 = a.deadline
		a.act = Yield()
		s.yieldCurr(c, a)
		if c.curr != a || a.deadline != d0 || c.skipBuddy != nil {
			t.Errorf("era %s, alone: curr %v, deadline %d→%d, skip %v; want no change", era, c.curr, d0, a.deadline, c.skipBuddy)
		}
	}
	s := newSim(t, smallSpec(1, 1, 1, 1, "interleaved"), 1, "era", "2.6-o1")
	if s.YieldModelled() == nil {
		t.Error("era 2.6-o1 claims to model sched_yield")
	}
}

// A yielder on CFS: the skip buddy is passed over only for a task within
// a wakeup granularity of it.
func TestCFSSkipBuddyGranularity(t *testing.T) {
	s, c, _ := twoHogsOneCPU(t, "5.2", 3)
	s.settle(c)
	s.updateCurr(c)
	s.schedule(c) // put a back; whoever is leftmost runs
	left := c.tree[0]
	c.skipBuddy = left
	if got := s.class.pickNextTask(c); got == left && s.wakeupPreemptLatency(c.tree[1], left) < 1 {
		t.Fatalf("picked the skip buddy %s although %s is within a granularity", left.Name, c.tree[1].Name)
	}
	c.tree[1].vruntime += 100 * Millisecond // far ahead: not worth the unfairness
	if got := s.class.pickNextTask(c); got != left {
		t.Fatalf("picked %s; want the skip buddy %s, the second being far ahead", got.Name, left.Name)
	}
	c.tree[1].vruntime -= 100 * Millisecond
}

// sched_setaffinity from the program: a task whose CPU leaves its mask
// runs its next action on an allowed CPU, moved at once; one whose CPU
// stays allowed stays.
func TestCtxSetAffinityMigratesCaller(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1)
	w := s.AddWorkload("pinned", "test")
	type step struct {
		now int64
		cpu int
	}
	var steps []step
	prog := ProgramFunc(func(ctx *Ctx) Action {
		steps = append(steps, step{ctx.Now(), ctx.CPU()})
		switch len(steps) {
		case 1, 3:
			return Run(Millisecond)
		case 2:
			if err := ctx.SetAffinity(cpumask.Of(2, 1-ctx.CPU())); err != nil {
				t.Fatal(err)
			}
			return Run(Millisecond)
		case 4:
			if err := ctx.SetAffinity(cpumask.Of(2, 0, 1)); err != nil {
				t.Fatal(err)
			}
			return Run(Millisecond)
		}
		return Block()
	})
	id, err := s.Spawn(w, TaskSpec{Name: "p", Program: prog})
	if err != nil {
		t.Fatal(err)
	}
	s.RunUntil(10 * Millisecond)
	if len(steps) != 5 {
		t.Fatalf("steps %v, want 5", steps)
	}
	if steps[2].cpu == steps[1].cpu || steps[3].cpu != steps[2].cpu || steps[4].cpu != steps[2].cpu {
		t.Fatalf("CPUs %v: want a move after the first SetAffinity and none after the second", steps)
	}
	// The move costs the switches and the cache refill, not a tick's wait.
	if d := steps[2].now - steps[1].now; d < Millisecond || d > Millisecond+200*Microsecond {
		t.Fatalf("the run after the move took %d ns; want about 1 ms", d)
	}
	if m := s.tasks[id].Migrations(); m != 1 {
		t.Fatalf("migrations %d, want 1", m)
	}
}
