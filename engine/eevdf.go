package engine

import "schedplay/engine/knob"

// The fair class of era 6.6: EEVDF as merged for v6.6 (kernel/sched/fair.c
// and features.h at v6.6, read at the 6.6.57 stable tag; Peter Zijlstra's
// "sched/fair: Implement an EEVDF-like scheduling policy" and its series).
// The v5.2 functions in fair.go dispatch here at their top when the era is
// 6.6, so era 5.2 runs exactly the code it ran before.
//
// Each runnable entity has a vruntime v_i, a request size (slice) r_i and a
// virtual deadline vd_i = v_i + r_i/w_i. The queue's virtual time V is the
// weight-average of the vruntimes of every runnable entity, curr included
// (avg_vruntime). An entity is eligible when it has received no more than
// its share, v_i <= V; the pick is the eligible entity with the earliest
// virtual deadline (pick_eevdf). lag_i = V - v_i is saved when an entity
// leaves the queue and restored when it comes back (PLACE_LAG), which
// replaces v5.2's sleeper credit, START_DEBIT and the vruntime
// renormalisation on migration. There is no tick preemption test: curr is
// rescheduled when it has used its slice (update_deadline), and a wakee
// preempts when it would be picked (check_preempt_wakeup).
//
// The kernel keeps the queue in an rbtree ordered by vruntime and augmented
// with each subtree's min_deadline, so the pick is O(log n). The engine's
// queue stays the sorted slice of v5.2 (the same order) and picks by a scan
// of the eligible prefix: eligibility is monotone in vruntime, so the scan
// stops at the first ineligible entity.

// entityKey is entity_key: v_i relative to min_vruntime.
func entityKey(c *cpu, t *Task) int64 { return t.vruntime - c.minVruntime }

// avgAdd is avg_vruntime_add, run when t joins the tree (__enqueue_entity):
// the queue keeps Σ key_i·w_i and Σ w_i over the tree (curr excluded). The
// engine's weights are already at the kernel's scale_load_down resolution.
func (s *Sim) avgAdd(c *cpu, t *Task) {
	c.avgVruntime += entityKey(c, t) * t.weight
	c.avgLoad += t.weight
}

// treeInsert66 is 6.6's __enqueue_entity: the tree insert and the
// avg_vruntime sum.
func (s *Sim) treeInsert66(c *cpu, t *Task) {
	s.treeInsert(c, t)
	s.avgAdd(c, t)
}

// treeRemove66 is 6.6's __dequeue_entity.
func (s *Sim) treeRemove66(c *cpu, t *Task) {
	s.treeRemove(c, t)
	s.avgSub(c, t)
}

// avgSub is avg_vruntime_sub (__dequeue_entity).
func (s *Sim) avgSub(c *cpu, t *Task) {
	c.avgVruntime -= entityKey(c, t) * t.weight
	c.avgLoad -= t.weight
}

// currOnRq reports whether c's current task is still on the runqueue
// (curr->on_rq): running, not dequeued for sleep or exit.
func currOnRq(c *cpu) *Task {
	if c.curr != nil && c.curr.state == TaskRunning {
		return c.curr
	}
	return nil
}

// avgSums returns Σ key·w and Σ w over every runnable entity of c: the
// tree plus curr when it is on the runqueue.
func avgSums(c *cpu) (avg, load int64) {
	avg, load = c.avgVruntime, c.avgLoad
	if curr := currOnRq(c); curr != nil {
		avg += entityKey(c, curr) * curr.weight
		load += curr.weight
	}
	return avg, load
}

// avgVruntime is avg_vruntime: V, rounded towards -inf so that an entity
// at V is eligible.
func (s *Sim) avgVruntime(c *cpu) int64 {
	avg, load := avgSums(c)
	return c.minVruntime + floorDiv(avg, load)
}

func floorDiv(avg, load int64) int64 {
	if load == 0 {
		return 0
	}
	if avg < 0 {
		avg -= load - 1
	}
	return avg / load
}

// entityEligible is entity_eligible: v_i <= V, tested without the
// division (Σ key_j·w_j >= key_i·Σ w_j) so rounding cannot flip it.
func (s *Sim) entityEligible(c *cpu, t *Task) bool {
	avg, load := avgSums(c)
	return avg >= entityKey(c, t)*load
}

// entityLag is entity_lag: V - v_i, clamped to twice the slice (at least a
// tick) in t's virtual time.
func (s *Sim) entityLag(v int64, t *Task) int64 {
	limit := calcDeltaFair(max(2*t.slice, s.tickNS), t.weight)
	return min(max(v-t.vruntime, -limit), limit)
}

// updateEntityLag is update_entity_lag, run by dequeue_entity while t is
// still on c's runqueue (counted in V).
func (s *Sim) updateEntityLag(c *cpu, t *Task) {
	t.vlag = s.entityLag(s.avgVruntime(c), t)
}

// updateMinVruntime66 is update_min_vruntime of v6.6: the same monotonic
// follower of min(curr, leftmost) as v5.2, which also rebases the
// avg_vruntime sum onto the new min_vruntime (avg_vruntime_update).
func (s *Sim) updateMinVruntime66(c *cpu) {
	v := c.minVruntime
	curr := currOnRq(c)
	if curr != nil {
		v = curr.vruntime
	}
	if len(c.tree) > 0 {
		if l := c.tree[0].vruntime; curr == nil || l < v {
			v = l
		}
	}
	if d := v - c.minVruntime; d > 0 {
		c.avgVruntime -= c.avgLoad * d
		c.minVruntime = v
	}
}

// updateDeadline is update_deadline, called by update_curr: once curr's
// vruntime reaches its deadline it gets a new slice and deadline, and, if
// anything else is runnable, is rescheduled (this replaces v5.2's
// check_preempt_tick). resched_curr on another CPU's runqueue sends it an
// IPI; on the CPU itself the flag is seen at its next preemption point.
func (s *Sim) updateDeadline(c *cpu, t *Task) {
	if t.vruntime < t.deadline {
		return
	}
	t.slice = s.baseSliceNS
	t.deadline = t.vruntime + calcDeltaFair(t.slice, t.weight)
	if c.nr > 1 {
		s.clearBuddies(c, t)
		if !c.needResched {
			c.needResched = true
			if s.actor != c.id {
				s.kick(c, s.now+s.k.Get(knob.IPINS))
			}
		}
	}
}

// pickEEVDF is pick_eevdf: among the runnable entities of c — the tree and
// curr, if curr is given and still runnable — the eligible one with the
// earliest virtual deadline. With RUN_TO_PARITY an eligible curr that still
// has the deadline it was picked with (set_next_entity stashes it) is kept.
// In v6.6 ties keep curr, then the leftmost (the kernel's tree walk keeps
// the first it met; the engine's order is deterministic). With the era's
// pickStrictCurr (6.12.117's single pick_eevdf, fair.c:926) a runqueue of
// one entity returns it without the eligibility test, and curr beats the
// best queued entity only with a strictly earlier deadline.
func (s *Sim) pickEEVDF(c *cpu, curr *Task) *Task {
	strict := s.fair.pickStrictCurr
	if strict && c.nr == 1 {
		if curr != nil && curr.state == TaskRunning {
			return curr
		}
		if len(c.tree) > 0 {
			return c.tree[0]
		}
	}
	if curr != nil && (curr.state != TaskRunning || !s.entityEligible(c, curr)) {
		curr = nil
	}
	if curr != nil && s.k.On(knob.RUN_TO_PARITY) && protected(curr) {
		return curr
	}
	var best *Task
	if !strict {
		best = curr
	}
	avg, load := avgSums(c)
	for _, t := range c.tree {
		if avg < entityKey(c, t)*load {
			break // not eligible, nor is anything to its right
		}
		if best == nil || t.deadline < best.deadline {
			best = t
		}
	}
	if strict && (best == nil || (curr != nil && curr.deadline < best.deadline)) {
		best = curr
	}
	if best == nil && len(c.tree) > 0 {
		// v6.6 pick_eevdf's "EEVDF scheduling fail, picking leftmost":
		// cannot happen (the leftmost is always eligible).
		best = c.tree[0]
	}
	return best
}

// pickNext66 is pick_next_entity of v6.6: the next buddy if NEXT_BUDDY
// set it and it is eligible, else pick_eevdf. schedule() has already put
// prev back in the tree, as the kernel's simple path does (put_prev_task
// before pick_next_entity(cfs_rq, NULL)), so there is no curr here and
// RUN_TO_PARITY acts at wakeup preemption.
func (s *Sim) pickNext66(c *cpu) *Task {
	if len(c.tree) == 0 {
		return nil
	}
	if nb := c.nextBuddy; s.k.On(knob.NEXT_BUDDY) && nb != nil && nb.state == TaskRunnable &&
		nb.cpu == c.id && s.entityEligible(c, nb) {
		return nb
	}
	return s.pickEEVDF(c, nil)
}

// checkPreemptWakeupEEVDF is check_preempt_wakeup of v6.6 (and 6.12's
// check_preempt_wakeup_fair) for p just enqueued on c: with NEXT_BUDDY a
// non-fork wakee becomes the next buddy (in 6.12 not a still-delayed one);
// then, with WAKEUP_PREEMPTION, curr is preempted if pick_eevdf (curr
// included) would choose p — after 6.12's PREEMPT_SHORT has let a wakee
// with a shorter slice cancel curr's slice protection (no 6.6 task is
// delayed, and PREEMPT_SHORT is off there). SCHED_IDLE/BATCH policies are
// not modelled. A reschedule that update_curr's update_deadline raised
// here also reports true (the kernel's resched_curr already sent the IPI).
func (s *Sim) checkPreemptWakeupEEVDF(c *cpu, p *Task, fork bool) bool {
	curr := c.curr
	if curr == nil {
		return true
	}
	if curr == p || curr.state != TaskRunning {
		return false
	}
	if s.k.On(knob.NEXT_BUDDY) && !fork && !p.delayed {
		c.nextBuddy = p
	}
	if c.needResched || !s.k.On(knob.WAKEUP_PREEMPTION) {
		return false
	}
	s.settle(c)
	s.updateCurr(c)
	if c.needResched {
		return true
	}
	if s.doPreemptShort(c, p, curr) {
		cancelProtect(curr)
	}
	return s.pickEEVDF(c, curr) == p
}

// forkVruntime66 is task_fork_fair of v6.6 on the parent's CPU pc: the
// child (vlag 0 and a base slice from __sched_fork) is placed with
// ENQUEUE_INITIAL on the parent's runqueue after update_curr.
func (s *Sim) forkVruntime66(pc *cpu, t, parent *Task) {
	t.vlag = 0
	t.slice = s.baseSliceNS
	if parent != nil && pc.curr == parent && parent.state == TaskRunning {
		s.updateCurr(pc)
	}
	s.placeEntity(pc, t, true)
}

// Deadline returns the task's EEVDF virtual deadline (era 6.6; 0 before).
func (t *Task) Deadline() int64 { return t.deadline }

// Lag returns the virtual lag the task saved when it last left a runqueue
// (era 6.6).
func (t *Task) Lag() int64 { return t.vlag }
