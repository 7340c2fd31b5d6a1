package engine

import (
	"fmt"
)

// CheckInvariants verifies the engine's structural invariants. With
// Config.Debug it runs after every event; tests run it over many seeds.
//
//   - a CPU runs at most one task, and that task is running, on that CPU
//     and allowed there;
//   - every runnable task is queued on exactly one runqueue, and only
//     runnable tasks are queued, each on a CPU it is allowed on;
//   - nr_running and the load weight match the queued and running tasks;
//   - each runqueue is ordered by vruntime (in era 6.6 too: the EEVDF tree
//     is ordered by vruntime, the deadline is only its augmentation), and in
//     era 6.6 its avg_vruntime sums match the queued tasks;
//   - an idle CPU with queued work has a pending kick (no lost wakeup);
//   - busy + idle time equals elapsed time on every CPU, and the CPU time
//     received by tasks equals the CPUs' busy time.
func (s *Sim) CheckInvariants() error {
	seen := make([]int, len(s.tasks))
	runningOn := make([]int, len(s.tasks))
	for i := range runningOn {
		runningOn[i] = -1
	}
	var busyTotal, execTotal int64
	nohzNr := 0
	for _, c := range s.cpus {
		if c.nohzIdle {
			nohzNr++
		}
		nr := len(c.tree)
		var w int64
		delayed := 0
		for _, t := range c.tree {
			if t.delayed {
				delayed++
			}
			seen[t.ID]++
			w += t.weight
			if t.state != TaskRunnable && !(t.state == TaskBlocked && t.delayed) {
				return fmt.Errorf("cpu %d: queued task %s is %s", c.id, t.Name, t.state)
			}
			if t.cpu != c.id {
				return fmt.Errorf("cpu %d: queued task %s thinks it is on cpu %d", c.id, t.Name, t.cpu)
			}
			if !t.allowed.Test(c.id) {
				return fmt.Errorf("cpu %d: queued task %s not allowed here (%s)", c.id, t.Name, t.allowed)
			}
		}
		if c.dl != nil {
			for _, e := range c.dl.tree {
				if e.task != nil && e.task != c.curr {
					seen[e.task.ID]++
				}
			}
		}
		if c.rt != nil {
			for _, q := range c.rt.queue {
				for _, t := range q {
					if t != c.curr {
						seen[t.ID]++
					}
				}
			}
		}
		if delayed != c.nrDelayed {
			return fmt.Errorf("cpu %d: %d delayed tasks queued, nr_delayed %d", c.id, delayed, c.nrDelayed)
		}
		if err := s.class.checkRQ(c); err != nil {
			return err
		}
		if t := c.curr; t != nil {
			if t.state != TaskRunning {
				return fmt.Errorf("cpu %d: current task %s is %s", c.id, t.Name, t.state)
			}
			if runningOn[t.ID] >= 0 {
				return fmt.Errorf("task %s runs on cpus %d and %d", t.Name, runningOn[t.ID], c.id)
			}
			runningOn[t.ID] = c.id
			if t.cpu != c.id || !t.allowed.Test(c.id) {
				return fmt.Errorf("cpu %d: current task %s (cpu %d) not allowed or misplaced", c.id, t.Name, t.cpu)
			}
			if !t.rt() && !t.dl() {
				nr++
				w += t.weight
			}
			execTotal += s.now - t.execStart
		} else if c.nr+c.rtNr+c.dlNr > 0 && !s.q.queued(2*s.topo.NCPU+c.id) && !(c.smtHeld && s.q.queued(s.topo.NCPU+c.id)) {
			return fmt.Errorf("cpu %d: idle with %d queued tasks and no kick pending", c.id, c.nr)
		}
		if nr != c.nr || w != c.loadWeight {
			return fmt.Errorf("cpu %d: nr_running %d load %d, but holds %d tasks of weight %d", c.id, c.nr, c.loadWeight, nr, w)
		}
		c.account(s.now)
		if c.busyNS+c.idleNS != s.now {
			return fmt.Errorf("cpu %d: busy %d + idle %d != elapsed %d", c.id, c.busyNS, c.idleNS, s.now)
		}
		busyTotal += c.busyNS
	}
	if nohzNr != s.nohzNrCPUs {
		return fmt.Errorf("nohz.nr_cpus %d, but %d CPUs in nohz.idle_cpus_mask", s.nohzNrCPUs, nohzNr)
	}
	for _, t := range s.tasks {
		execTotal += t.sumExec
		if t.dl() && t.dlse.throttled && t.state == TaskRunnable {
			seen[t.ID]++ // on_rq, off the tree until its replenishment
		}
		switch t.state {
		case TaskRunnable:
			if seen[t.ID] != 1 {
				return fmt.Errorf("runnable task %s is on %d runqueues", t.Name, seen[t.ID])
			}
		case TaskRunning:
			if seen[t.ID] != 0 || runningOn[t.ID] < 0 {
				return fmt.Errorf("running task %s: queued %d times, running on %d", t.Name, seen[t.ID], runningOn[t.ID])
			}
		default:
			if t.delayed {
				if seen[t.ID] != 1 {
					return fmt.Errorf("delayed task %s is on %d runqueues", t.Name, seen[t.ID])
				}
				continue
			}
			if seen[t.ID] != 0 {
				return fmt.Errorf("%s task %s is queued", t.state, t.Name)
			}
			if t.state == TaskBlocked && t.sleepTimer && !s.q.queued(s.taskSlot(t)) {
				return fmt.Errorf("sleeping task %s has no timer", t.Name)
			}
		}
	}
	cv := &s.conservation
	idle, waiting := 0, 0
	for _, c := range s.cpus {
		if c.empty() {
			idle++
		}
		wait := c.waiting()
		if wait {
			waiting++
		}
		if cv.cpuIdle[c.id] != c.empty() || cv.cpuWait[c.id] != wait {
			return fmt.Errorf("cpu %d: conservation status stale (idle %t/%t waiting %t/%t)", c.id, cv.cpuIdle[c.id], c.empty(), cv.cpuWait[c.id], wait)
		}
	}
	if idle != cv.idle || waiting != cv.waiting {
		return fmt.Errorf("conservation counts idle %d waiting %d, recomputed %d %d", cv.idle, cv.waiting, idle, waiting)
	}
	listed := 0
	for llc, shards := range s.srq {
		for idx, sh := range shards {
			for _, t := range sh.list {
				listed++
				if t.state != TaskRunnable || t.srqLLC != llc || t.srqShard != idx {
					return fmt.Errorf("shared runqueue %d/%d lists %s (%s, shard %d/%d)", llc, idx, t.Name, t.state, t.srqLLC, t.srqShard)
				}
			}
		}
	}
	for _, t := range s.tasks {
		if t.srqShard >= 0 {
			listed--
		}
	}
	if listed != 0 {
		return fmt.Errorf("shared runqueue lists and task marks disagree by %d", listed)
	}
	if execTotal != busyTotal {
		return fmt.Errorf("tasks received %d ns of CPU but CPUs were busy %d ns", execTotal, busyTotal)
	}
	return nil
}

// checkEEVDF verifies c's EEVDF bookkeeping (era 6.6): the avg_vruntime
// sums equal Σ (v_i - min_vruntime)·w_i and Σ w_i recomputed over the tree,
// and the runnable entity (queued or curr) with the least vruntime is
// eligible, so pick_eevdf always finds one.
func (s *Sim) checkEEVDF(c *cpu) error {
	var avg, load int64
	for _, t := range c.tree {
		avg += entityKey(c, t) * t.weight
		load += t.weight
	}
	if avg != c.avgVruntime || load != c.avgLoad {
		return fmt.Errorf("cpu %d: avg_vruntime %d avg_load %d, recomputed %d %d", c.id, c.avgVruntime, c.avgLoad, avg, load)
	}
	var left *Task
	if len(c.tree) > 0 {
		left = c.tree[0]
	}
	if curr := currOnRq(c); curr != nil && (left == nil || curr.vruntime < left.vruntime) {
		left = curr
	}
	if left != nil && !s.entityEligible(c, left) {
		return fmt.Errorf("cpu %d: the runnable task with the least vruntime, %s, is not eligible", c.id, left.Name)
	}
	return nil
}

// checkTreeOrder checks that c's queued tasks are in vruntime order (the
// rb-tree of CFS and EEVDF).
func (s *Sim) checkTreeOrder(c *cpu) error {
	for i := 1; i < len(c.tree); i++ {
		if entityBefore(c.tree[i], c.tree[i-1]) {
			return fmt.Errorf("cpu %d: runqueue out of vruntime order at %d", c.id, i)
		}
	}
	return nil
}
