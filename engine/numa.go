package engine

import "schedplay/engine/knob"

// Automatic NUMA balancing, reduced to what moves tasks: the kernel's NUMA
// hinting faults tell a task which node holds the memory it touches, and
// task_numa_migrate moves a task running elsewhere to a CPU on that node
// (an idle one, in this model) when that does not make the load imbalance
// between the nodes worse, retrying every scan period/16 while it stays
// misplaced. Threads of one process share their process's memory (its
// numa_group), so a multi-threaded benchmark is drawn together onto the
// node of its memory; a separate process's memory is where it first ran.
// The load balancer treats a move off the memory's node as "degrading
// locality": like a cache-hot task, it is only moved after cache_nice_tries
// failures (migrate_degrades_locality).
//
// Not modelled: page migration (memory never follows the task), the
// adaptive scan period, swapping tasks between nodes, numa_group fault
// statistics spreading a group over several nodes.

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

// numaCheck runs at the tick of c for its running task: a task away from
// its memory's node is moved to an idle CPU there.
func (s *Sim) numaCheck(c *cpu) {
	t := c.curr
	if t == nil || t.memNode < 0 || !s.k.On(knob.NUMA_BALANCING) || s.topo.Spec.Topology.Sockets < 2 {
		return
	}
	if s.topo.Socket[c.id] == t.memNode || s.now < t.numaNext || c.pushTo >= 0 {
		return
	}
	t.numaNext = s.now + numaRetryNS
	if s.numaTooImbalanced(t, s.topo.Socket[c.id], t.memNode) {
		return
	}
	node := s.topo.SocketSpan[t.memNode]
	for id := node.First(); id >= 0; id = node.Next(id + 1) {
		if t.allowed.Test(id) && s.cpus[id].idle() {
			c.pushTo = id
			c.needResched = true
			s.kick(c, s.now) // the migration stopper preempts at once
			s.stats.numaMigrations++
			return
		}
	}
}

// numaTooImbalanced is load_too_imbalanced of task_numa_find_cpu (v5.2.1
// kernel/sched/fair.c at fc4ec72d): moving t from node src to node dst
// is refused when it would make the capacity-corrected difference between
// the nodes' runnable loads larger than it is now ("would this change
// make things worse?"). Older kernels allowed a move that left the nodes
// within imbalance_pct of each other; v5.2 does not. Node capacities are
// equal here.
func (s *Sim) numaTooImbalanced(t *Task, src, dst int) bool {
	nodeLoad := func(n int) int64 {
		span := s.topo.SocketSpan[n]
		sum := int64(0)
		for id := span.First(); id >= 0; id = span.Next(id + 1) {
			sum += s.cpus[id].runnableLoad.at(s.now)
		}
		return sum
	}
	origSrc, origDst := nodeLoad(src), nodeLoad(dst)
	l := t.load.at(s.now)
	abs := func(x int64) int64 { return max(x, -x) }
	return abs((origDst+l)-(origSrc-l)) > abs(origDst-origSrc)
}

// NUMAMigrations counts moves made by NUMA balancing.
func (s *Sim) NUMAMigrations() int64 { return s.stats.numaMigrations }
