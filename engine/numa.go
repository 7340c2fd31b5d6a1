package engine

import "schedplay/engine/knob"

// Automatic NUMA balancing, reduced to what moves tasks: the kernel's NUMA
// hinting faults tell a task which node holds the memory it touches, and
// task_numa_migrate (kernel/sched/fair.c, v5.2.1) looks for a better place
// for a task running elsewhere when it retries every scan period/16 while
// it stays misplaced. Threads of one process share their process's memory
// (its numa_group), so a multi-threaded benchmark is drawn together onto
// the node of its memory; a separate process's memory is where it first
// ran. The load balancer treats a move off the memory's node as "degrading
// locality": like a cache-hot task, it is only moved after
// cache_nice_tries failures (migrate_degrades_locality).
//
// The search is v5.2's task_numa_find_cpu / task_numa_compare over every
// CPU of the memory's node that the task may use, in CPU order (numaCheck
// below has the rules): an idle CPU takes a plain move, a busy one either
// a move onto it (the task then queues behind the one running there) or a
// swap with the task running there (migrate_swap: both tasks move at the
// same instant). The engine keeps no fault statistics: all of a task's
// faults are on its memory's node, so its task_weight and group_weight
// are 1000 there and 0 on any other node (memNone tasks, like kernel
// threads, have no faults: 0 everywhere).
//
// Not modelled: page migration (memory never follows the task), the
// adaptive scan period, numa_group fault statistics spreading a group
// over several nodes (and with them the search of nodes other than the
// preferred one, which a task whose faults are all on one node never
// profits from), rq->numa_migrate_on (the engine's moves happen at the
// instant they are chosen; a CPU whose running task is already being
// pushed away is only skipped as a swap partner), select_idle_sibling at
// the chosen idle CPU (it returns that CPU: it is idle). Eras 6.1 and 6.6
// run this v5.2 search; their task_numa_find_cpu differs (see
// numaCheck), which is not modelled. Era 2.6-o1 has no NUMA balancing
// (it came in v3.8): NUMA_BALANCING is absent there.

// Memory says where a task's memory lives for NUMA balancing.
type Memory uint8

const (
	// MemFirstTouch: private memory on the node where the task first
	// runs (a single-threaded process).
	MemFirstTouch Memory = iota
	// MemNode: shared memory on TaskSpec.MemNode (threads of one process
	// whose memory the main thread touched first).
	MemNode
	// MemNone: nothing worth following (kernel threads).
	MemNone
)

// numaRetryNS is scan_period/16 at the minimum scan period of 1000 ms.
const numaRetryNS = 1000 * Millisecond / 16

// numaSmallImp is SMALLIMP of v5.2.1 fair.c: a swap must improve the
// fault score by at least this much, and beat the best one so far by more
// than half of it, or it would only ping-pong tasks between the nodes.
const numaSmallImp = 30

// numaWeight is task_weight (and group_weight) of v5.2.1 fair.c, the
// per-mille share of t's NUMA faults on node nid: all of them are on the
// node of its memory, none anywhere else; a task with no memory to follow
// has no faults (task_weight returns 0 without p->numa_faults).
func numaWeight(t *Task, nid int) int64 {
	if t.memNode >= 0 && t.memNode == nid {
		return 1000
	}
	return 0
}

// numaGroup stands for t's numa_group, 0 for none: the kernel puts tasks
// in a group when they fault on the same pages, which here are the threads
// of one process sharing its memory (MemNode, one address space). A
// MemFirstTouch task's memory is private and a memNone task has none.
func numaGroup(t *Task) int {
	if t.memPolicy == MemNode {
		return t.mm
	}
	return 0
}

// numaCheck runs at the tick of c for its running task: a task away from
// its memory's node looks for a place there, as numa_migrate_preferred →
// task_numa_migrate → task_numa_find_cpu → task_numa_compare do in v5.2.1
// (kernel/sched/fair.c):
//
//   - maymove, worked out once for the node: moving the task alone must
//     not widen the nodes' load difference (load_too_imbalanced).
//   - each CPU of the node the task may use, in order, is compared with
//     the best so far (best_imp starts at 0): an idle one is taken for a
//     move if maymove and the move's improvement is at least the best,
//     so of equal candidates the LAST idle CPU wins (">=");
//   - a busy one whose running task cur may not run on the task's CPU is
//     skipped; otherwise the swap's improvement is the task's gain plus
//     cur's (its weight on the task's node minus on its own, with task
//     weights when both share a group or both have none, less 1/16 inside
//     a group); if maymove and the move alone gains more than the swap and
//     more than the best, the task moves onto that busy CPU (strictly
//     more: the first of equal busy CPUs wins); else the swap is taken
//     when it gains at least SMALLIMP, more than the best plus SMALLIMP/2
//     (the first of equal swaps wins), and, unless both loads are equal,
//     the exchange does not widen the load difference.
//
// A move is migrate_task_to (the stopper pushes the task); a swap is
// migrate_swap, stop_two_cpus running migrate_swap_stop on both CPUs: here
// both CPUs' running tasks are pushed to each other's CPU at this instant.
//
// Eras 6.1 and 6.6 search differently (v6.1 fair.c): a node with spare
// capacity takes its cached idle CPU at once when adjust_numa_imbalance
// sees no imbalance, swaps within a group (or between group-less tasks)
// are not considered while the node has spare capacity, cur's preferred
// node adjusts the swap score, and the search stops at the first idle
// move. They run the v5.2 search here (not modelled).
func (s *Sim) numaCheck(c *cpu) {
	t := c.curr
	if t == nil || t.rt() || t.dl() || t.memNode < 0 || !s.k.On(knob.NUMA_BALANCING) || s.topo.Spec.Topology.Sockets < 2 {
		return
	}
	if s.topo.Socket[c.id] == t.memNode || s.now < t.numaNext || c.pushTo >= 0 {
		return
	}
	t.numaNext = s.now + numaRetryNS
	src, dst := s.topo.Socket[c.id], t.memNode
	srcLoad, dstLoad := s.nodeLoad(src), s.nodeLoad(dst)
	pLoad := t.load.at(s.now)
	// task_numa_migrate: the task's gain from its node to dst, per task and
	// per group; task_numa_compare's imp is the group's when it has one.
	taskImp := numaWeight(t, dst) - numaWeight(t, src)
	groupImp := int64(0)
	if numaGroup(t) != 0 {
		groupImp = taskImp // the group's faults are where the task's are
	}
	moveImp := taskImp
	if numaGroup(t) != 0 {
		moveImp = groupImp
	}
	maymove := !numaLoadTooImbalanced(srcLoad, dstLoad, pLoad)

	bestCPU, bestImp := -1, int64(0)
	var bestTask *Task
	node := s.topo.SocketSpan[dst]
	for id := node.First(); id >= 0; id = node.Next(id + 1) {
		if !t.allowed.Test(id) {
			continue
		}
		d := s.cpus[id]
		cur := d.curr
		if cur == nil {
			if maymove && moveImp >= bestImp {
				bestCPU, bestTask, bestImp = id, nil, moveImp
			}
			continue
		}
		if cur == t || !cur.allowed.Test(c.id) {
			continue
		}
		var imp int64
		if g := numaGroup(cur); g == numaGroup(t) {
			imp = taskImp + numaWeight(cur, src) - numaWeight(cur, dst)
			if g != 0 {
				imp -= imp / 16 // hysteresis inside one group
			}
		} else {
			// group_weight when both have a group, else task_weight:
			// the same numbers here.
			imp = moveImp + numaWeight(cur, src) - numaWeight(cur, dst)
		}
		if maymove && moveImp > imp && moveImp > bestImp {
			bestCPU, bestTask, bestImp = id, nil, moveImp
			continue
		}
		if imp < numaSmallImp || imp <= bestImp+numaSmallImp/2 {
			continue
		}
		if d.pushTo >= 0 {
			continue // its stopper is already moving cur elsewhere
		}
		if l := pLoad - cur.load.at(s.now); l != 0 && numaLoadTooImbalanced(srcLoad, dstLoad, l) {
			continue
		}
		bestCPU, bestTask, bestImp = id, cur, imp
	}
	if bestCPU < 0 {
		return
	}
	s.numaPush(c, bestCPU)
	if bestTask == nil {
		s.stats.numaMigrations++
		return
	}
	s.numaPush(s.cpus[bestCPU], c.id)
	s.stats.numaSwaps++
}

// numaPush has c's stopper push its running task to CPU dst at once.
func (s *Sim) numaPush(c *cpu, dst int) {
	c.pushTo = dst
	c.needResched = true
	s.kick(c, s.now) // the migration stopper preempts at once
}

// nodeLoad is update_numa_stats' load of node n: its CPUs' runnable load.
func (s *Sim) nodeLoad(n int) int64 {
	span := s.topo.SocketSpan[n]
	sum := int64(0)
	for id := span.First(); id >= 0; id = span.Next(id + 1) {
		sum += s.cpus[id].runnableLoad.at(s.now)
	}
	return sum
}

// numaTooImbalanced reports whether moving t alone from node src to node
// dst fails load_too_imbalanced (numaLoadTooImbalanced).
func (s *Sim) numaTooImbalanced(t *Task, src, dst int) bool {
	return numaLoadTooImbalanced(s.nodeLoad(src), s.nodeLoad(dst), t.load.at(s.now))
}

// numaLoadTooImbalanced is load_too_imbalanced of task_numa_find_cpu and
// task_numa_compare (v5.2.1 kernel/sched/fair.c at fc4ec72d): moving load
// from the node with srcLoad to the one with dstLoad (for a swap, the
// difference of the two tasks' loads) is refused when it would make the
// capacity-corrected difference between the nodes' runnable loads larger
// than it is now ("would this change make things worse?"). Older kernels
// allowed a move that left the nodes within imbalance_pct of each other;
// v5.2 does not. Node capacities are equal here.
func numaLoadTooImbalanced(srcLoad, dstLoad, load int64) bool {
	abs := func(x int64) int64 { return max(x, -x) }
	return abs((dstLoad+load)-(srcLoad-load)) > abs(dstLoad-srcLoad)
}

// NUMAMigrations counts moves made by NUMA balancing (migrate_task_to).
func (s *Sim) NUMAMigrations() int64 { return s.stats.numaMigrations }

// NUMASwaps counts task swaps made by NUMA balancing (migrate_swap).
func (s *Sim) NUMASwaps() int64 { return s.stats.numaSwaps }
