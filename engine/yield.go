package engine

import "fmt"

// sched_yield(2): do_sched_yield calls the class's yield_task and then
// schedule(). The fair class's yield_task_fair does nothing when curr is
// alone on its runqueue (rq->nr_running == 1); otherwise it clears curr's
// buddies, charges curr its runtime (update_curr) and then, by era:
//
//   - CFS (v5.2, 6.1): set_skip_buddy — pick_next_entity passes over the
//     skip buddy for the second task in vruntime order unless that one is
//     more than a wakeup granularity ahead (class_cfs.go's pickNextTask);
//     the skip buddy is cleared when picked or dequeued (clear_buddies).
//   - EEVDF (v6.6, 6.12): se->deadline += calc_delta_fair(se->slice, se):
//     the yielder's virtual deadline moves one slice later, so pick_eevdf
//     prefers any eligible task with an earlier one.
//
// The O(1) scheduler (2.6.7) moved a yielding task to the expired array;
// that is not modelled, and YieldModelled says so.

// YieldModelled reports whether the era models sched_yield (ActYield);
// the error says why not.
func (s *Sim) YieldModelled() error {
	if s.fair.yieldTask == nil {
		return fmt.Errorf("engine: era %s does not model sched_yield (the O(1) scheduler's move to the expired array); eras 5.2 and 6.1 (CFS skip buddy) and 6.6 and 6.12 (EEVDF deadline push) do", s.k.Era())
	}
	return nil
}

// yieldCurr is do_sched_yield for curr t of c: yield_task_fair, then
// schedule(), which may pick t again.
func (s *Sim) yieldCurr(c *cpu, t *Task) {
	if t.rt() {
		// yield_task_rt: requeue_task_rt(rq, curr, 0), to the tail of
		// its priority's list.
		s.settle(c)
		s.updateCurr(c)
		s.rtRequeueTail(c, t)
		s.schedule(c)
		return
	}
	if t.dl() {
		s.settle(c)
		s.updateCurr(c)
		s.yieldDL(c, t)
		s.schedule(c)
		return
	}
	if s.fair.yieldTask == nil {
		panic(fmt.Sprintf("engine: task %q yields, but %v", t.Name, s.YieldModelled()))
	}
	if c.nr > 1 {
		s.clearBuddies(c, t)
		s.settle(c)
		s.updateCurr(c)
		s.fair.yieldTask(s, c, t)
	}
	s.schedule(c)
}

// yieldTaskSkipBuddy is CFS's yield_task_fair after update_curr:
// set_skip_buddy(se).
func (s *Sim) yieldTaskSkipBuddy(c *cpu, t *Task) { c.skipBuddy = t }

// yieldTaskDeadline is EEVDF's yield_task_fair after update_curr:
// se->deadline += calc_delta_fair(se->slice, se).
func (s *Sim) yieldTaskDeadline(c *cpu, t *Task) {
	t.deadline += calcDeltaFair(t.slice, t.weight)
}
