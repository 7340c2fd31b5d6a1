package engine

import (
	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
)

// SHARED_RUNQ as David Vernet's v3 has it ("[PATCH v3 0/7] sched: Implement
// shared runqueue in CFS", Aug 2023, Message-ID
// 20230809221218.163894-1-void@manifault.com; patches 6/7 and 7/7 are
// …-7-… and …-8-…; kernel-reference.md §5): a per-LLC FIFO of runnable
// tasks split into shards of shard_size CPUs (SHARED_RUNQ_SHARD_SZ = 6),
// each a list and a spinlock in one cache-line-aligned struct. "wakeup"
// pushes a task woken on its previous CPU (v1: wakees select_task_rq
// already moved found their CPU); "all" pushes every runnable, non-running
// task when it is queued (v3, from __enqueue_entity). A task leaves the
// list when it runs anywhere or is migrated (__dequeue_entity). Pinned
// tasks never enter the list.
//
// A CPU about to go idle runs shared_runq_pick_next_task before any
// newly-idle balancing (which then skips the domains up to the LLC): for
// each shard, its own first and then the others round robin, it peeks at
// the list without the lock, and if the list is not empty takes the lock
// and looks at the HEAD only (list_first_entry_or_null): it takes the head
// if is_cpu_allowed on this CPU, otherwise that shard yields nothing and
// it tries the next one. Looping past a head that cannot move was a later
// suggestion (Gautham Shenoy; K Prateek Nayak's experimental diff), not
// v3. v3 does this without looking at the root domain's overload flag
// (v4, Dec 2023, added that check).
//
// Two later proposals are separate knobs, off by default:
//   - SRQ_LLC_SHARD: one shard per LLC whatever shard_size says — K Prateek
//     Nayak ran his Zen3 tests with SHARED_RUNQ_SHARD_SZ = 16 = sd_llc_size
//     ("[RFC PATCH 0/3] DO NOT MERGE: Breaking down the experimantal diff",
//     20230831104508.7619-1-kprateek.nayak@amd.com).
//   - SRQ_OVERLOAD: his overload gates — pull only while the root domain is
//     overloaded (suggested in the v3 thread, adopted in v4:
//     20231212003141.216236-1-void@manifault.com), and a per-shard overload
//     flag (RFC 3/3, 20230831104508.7619-4-kprateek.nayak@amd.com) set when
//     one of the shard's runqueues goes from fewer than 2 to 2 tasks (where
//     rd->overload is set) and cleared when a pull finds the shard empty; a
//     newly idle CPU skips shards whose flag is clear. The flag sits on its
//     own read-mostly cache line, so reading and setting it cost nothing
//     here.
//
// Cost model. The shard's list head and spinlock share one cache line (v3
// makes the struct ____cacheline_aligned); every operation drags that line
// to the CPU doing it. Each shard lock is a simulated resource: an
// acquisition waits (spinning — its CPU pays the wait) until the lock is
// free, first in first out (a queued spinlock), then holds it. The hold is
// srq_lock_ns, the preset's price of an uncontended critical section: the
// shard line moved in from the core that used it last, the neighbouring
// task's list node and the list update. On top of that the price of moving
// the shard line depends on how many other CPUs touch it:
//   - nobody else touched it since this core last held it: the line is
//     still in this core's L1/L2 (SMT siblings share them) and the
//     acquisition saves that transfer — the hold is srq_lock_ns − line_llc_ns;
//   - one or more other CPUs touched it (a lock holder, or an unlocked
//     list_empty() peek by a CPU going idle, which leaves a shared copy the
//     next writer must invalidate): one transfer, already in srq_lock_ns —
//     invalidations of several sharers go out in parallel, so their number
//     adds nothing measurable;
//   - another CPU waits for the lock during the hold: it spins reading the
//     lock word, on the very line the holder writes, so each of the
//     holder's later writes to the line — the list update when it touches
//     the head, and the unlock — finds it stolen and must fetch it back:
//     one more transfer per write, i.e. the hold grows by 2 transfers for a
//     push or a pop, once the lock is contended at all. A queued spinlock
//     (qspinlock, x86 since v4.2) lets only the first waiter or two spin on
//     the lock word — the rest spin on their own MCS node — so this does
//     not grow further with more waiters; the wait does, linearly, as each
//     waiter queues behind every hold ahead of it. (A ticket lock, where
//     every waiter polls the line, would make the handoff itself grow with
//     the number of waiters.)
// One transfer is priced at line_llc_ns, the preset's measured
// core-to-core latency inside an LLC (the shard never leaves it); nothing
// here is fitted to a table.

type srqShard struct {
	list []*Task
	// freeAt is when the last granted critical section ends.
	freeAt int64
	// holds are the granted critical sections that are not over yet, in
	// grant (FIFO) order, so that a later waiter can mark them contended.
	holds []srqHold
	// sharers are the CPUs whose caches hold a copy of the shard's line.
	sharers cpumask.Mask
	// overload is SRQ_OVERLOAD's per-shard flag.
	overload bool
}

// srqHold is one granted critical section.
type srqHold struct {
	cpu       int
	end       int64
	writes    int64 // writes to the shard line after the acquisition
	contended bool
}

// srqShards returns the shards of llc, creating them on first use:
// ceil(llc_size / shard_size) shards, or one with SRQ_LLC_SHARD.
func (s *Sim) srqShards(llc int) []srqShard {
	if s.srq == nil {
		s.srq = make([][]srqShard, s.topo.NLLC)
		s.srqBusy = make([]int64, s.topo.NCPU)
	}
	if s.srq[llc] == nil {
		size := int64(s.topo.LLCSpan[llc].Weight())
		per := s.k.Get(knob.ShardSize)
		if s.k.On(knob.SRQ_LLC_SHARD) {
			per = size
		}
		s.srq[llc] = make([]srqShard, (size+per-1)/per)
		for i := range s.srq[llc] {
			s.srq[llc][i].sharers = cpumask.New(s.topo.NCPU)
		}
	}
	return s.srq[llc]
}

// srqShardIndex is the v3 patch's shard of cpu: (cpu >> 1) % nr_shards,
// meant to keep SMT pairs together (which it does only where siblings have
// adjacent numbers, not on interleaved x86/AMD numbering).
func (s *Sim) srqShardIndex(cpu int) int {
	return (cpu >> 1) % len(s.srqShards(s.topo.LLC[cpu]))
}

// srqCoreHasLine reports whether cpu's core (its L1/L2, shared by SMT
// siblings) holds a copy of the shard's line.
func (s *Sim) srqCoreHasLine(sh *srqShard, cpu int) bool {
	for _, c := range s.topo.CoreCPUs[s.topo.Core[cpu]] {
		if sh.sharers.Test(c) {
			return true
		}
	}
	return false
}

// srqOnlyCoreHasLine reports whether no core but cpu's holds the line.
func (s *Sim) srqOnlyCoreHasLine(sh *srqShard, cpu int) bool {
	if !s.srqCoreHasLine(sh, cpu) {
		return false
	}
	core := s.topo.Core[cpu]
	for c := sh.sharers.First(); c >= 0; c = sh.sharers.Next(c + 1) {
		if s.topo.Core[c] != core {
			return false
		}
	}
	return true
}

// srqReady is when cpu can start its next shard operation: now, or later
// if earlier lock work at this instant already occupies it.
func (s *Sim) srqReady(cpu int) int64 { return max(s.now, s.srqBusy[cpu]) }

// srqPeek is an unlocked read of the shard's line (list_empty) by cpu and
// returns what it costs cpu: one line transfer unless its core has a copy.
func (s *Sim) srqPeek(sh *srqShard, cpu int) int64 {
	cost := int64(0)
	if !s.srqCoreHasLine(sh, cpu) {
		cost = s.k.Get(knob.LineLLCNS)
		s.stats.srqLineXfers++
	}
	sh.sharers.Set(cpu)
	s.srqBusy[cpu] = s.srqReady(cpu) + cost
	return cost
}

// srqLock acquires and releases a shard lock for one operation by cpu that
// writes the shard's line `writes` more times after acquiring it (the list
// update if it touches the head, then the unlock), and returns the CPU time
// it costs cpu from now: spin wait plus hold. Holds already granted that
// cpu has to wait through become contended and grow (the model above); the
// CPUs that own them pay the extra.
func (s *Sim) srqLock(sh *srqShard, cpu int, writes int64) int64 {
	xfer := s.k.Get(knob.LineLLCNS)
	ready := s.srqReady(cpu)
	done := 0
	for done < len(sh.holds) && sh.holds[done].end <= ready {
		done++
	}
	sh.holds = append(sh.holds[:0], sh.holds[done:]...)
	// cpu spins from ready until every hold ahead of it is over.
	shift := int64(0)
	for i := range sh.holds {
		h := &sh.holds[i]
		if shift > 0 {
			// An earlier hold grew: this one starts later, and its
			// owner spins that much longer before it.
			h.end += shift
			s.charge(s.cpus[h.cpu], shift)
			s.stats.srqLockWaitNS += shift
		}
		if !h.contended && h.cpu != cpu {
			h.contended = true
			extra := h.writes * xfer
			h.end += extra
			shift += extra
			s.charge(s.cpus[h.cpu], extra)
			s.stats.srqContended++
			s.stats.srqLineXfers += h.writes
			s.stats.srqLockHoldNS += extra
		}
		s.srqBusy[h.cpu] = max(s.srqBusy[h.cpu], h.end)
	}
	sh.freeAt += shift
	start := max(ready, sh.freeAt)
	hold := s.k.Get(knob.SRQLockNS)
	if s.srqOnlyCoreHasLine(sh, cpu) {
		hold = max(0, hold-xfer) // the line never left this core
	} else {
		s.stats.srqLineXfers++
	}
	end := start + hold
	sh.freeAt = end
	sh.holds = append(sh.holds, srqHold{cpu: cpu, end: end, writes: writes})
	sh.sharers.AndNot(sh.sharers) // the acquiring write invalidates every other copy
	sh.sharers.Set(cpu)
	s.srqBusy[cpu] = end
	wait := start - ready
	s.stats.srqLockAcq++
	s.stats.srqLockWaitNS += wait
	s.stats.srqLockHoldNS += hold
	return wait + hold
}

// charge makes c pay ns of CPU time: stolen from its current task, or
// owed by the next task it switches to when idle.
func (s *Sim) charge(c *cpu, ns int64) {
	if ns <= 0 {
		return
	}
	if c.curr != nil {
		s.steal(c, ns)
		return
	}
	c.pendingOverhead += ns
}

func (s *Sim) srqOn() bool { return s.k.Get(knob.SHARED_RUNQ) != knob.SharedRunqOff }

// srqPush appends t (queued on its runqueue) to the shard of its CPU; payer
// is the CPU doing the enqueue.
func (s *Sim) srqPush(t *Task, payer *cpu) {
	if t.srqShard >= 0 || t.rt() || t.dl() || t.allowed.Weight() == 1 {
		return
	}
	llc := s.topo.LLC[t.cpu]
	idx := s.srqShardIndex(t.cpu)
	sh := &s.srqShards(llc)[idx]
	// list_add_tail writes head->prev, then the unlock: two writes.
	s.charge(payer, s.srqLock(sh, payer.id, 2))
	sh.list = append(sh.list, t)
	t.srqLLC, t.srqShard = llc, idx
	s.stats.srqPushes++
}

// srqRemove takes t off its shard list, if it is on one.
func (s *Sim) srqRemove(t *Task, payer *cpu) {
	if t.srqShard < 0 {
		return
	}
	sh := &s.srq[t.srqLLC][t.srqShard]
	at := -1
	for i, x := range sh.list {
		if x == t {
			at = i
			break
		}
	}
	// list_del_init writes the head's pointers only when t is first or
	// last; the unlock always writes the line.
	writes := int64(1)
	if at == 0 || at == len(sh.list)-1 {
		writes = 2
	}
	s.charge(payer, s.srqLock(sh, payer.id, writes))
	if at >= 0 {
		copy(sh.list[at:], sh.list[at+1:])
		sh.list[len(sh.list)-1] = nil
		sh.list = sh.list[:len(sh.list)-1]
	}
	t.srqShard = -1
}

// srqNoteEnqueue is called when c's runqueue has just grown to nr tasks:
// SRQ_OVERLOAD's per-shard flag is set where rd->overload is, when a
// runqueue goes from fewer than 2 tasks to 2 (add_nr_running).
func (s *Sim) srqNoteEnqueue(c *cpu) {
	if c.nr != 2 || !s.srqOn() || !s.k.On(knob.SRQ_OVERLOAD) {
		return
	}
	s.srqShards(s.topo.LLC[c.id])[s.srqShardIndex(c.id)].overload = true
}

// srqPop is the newly idle pull, shared_runq_pick_next_task of v3: for
// each shard of c's LLC, c's own first and then the others in turn, peek
// at the list without the lock; if it is not empty, lock it and take the
// head if it may run on c — else that shard yields nothing. The task is
// migrated to c's runqueue.
func (s *Sim) srqPop(c *cpu) *Task {
	overloadGate := s.k.On(knob.SRQ_OVERLOAD)
	if overloadGate && !s.overloaded {
		return nil // v4 / K Prateek Nayak: nothing to pull unless rd->overload
	}
	llc := s.topo.LLC[c.id]
	shards := s.srqShards(llc)
	own := s.srqShardIndex(c.id)
	for k := range shards {
		sh := &shards[(own+k)%len(shards)]
		if overloadGate && !sh.overload {
			continue
		}
		s.charge(c, s.srqPeek(sh, c.id))
		if len(sh.list) == 0 {
			sh.overload = false
			continue
		}
		p := sh.list[0]
		if !p.allowed.Test(c.id) || p.state != TaskRunnable {
			// Head only: the lock is taken, the head looked at and the
			// lock dropped (one write: the unlock).
			s.charge(c, s.srqLock(sh, c.id, 1))
			s.stats.srqHeadBlocked++
			continue
		}
		// list_del_init of the head writes head->next, then the unlock.
		s.charge(c, s.srqLock(sh, c.id, 2))
		copy(sh.list, sh.list[1:])
		sh.list[len(sh.list)-1] = nil
		sh.list = sh.list[:len(sh.list)-1]
		p.srqShard = -1
		src := s.cpus[p.cpu]
		s.class.detachTask(src, p, c)
		s.class.attachTask(c, p, c)
		s.stats.srqPops++
		return p
	}
	return nil
}

// SharedRunqStats describes shared-runqueue activity.
type SharedRunqStats struct {
	Pushes           int64 `json:"pushes"`
	Pops             int64 `json:"pops"`
	LockAcquisitions int64 `json:"lock_acquisitions"`
	LockWaitNS       int64 `json:"lock_wait_ns"`
	LockHoldNS       int64 `json:"lock_hold_ns"`
	// ContendedHolds counts critical sections during which another CPU
	// waited for the lock (each grew by its writes' line transfers).
	ContendedHolds int64 `json:"contended_holds"`
	// LineTransfers counts moves of a shard's cache line between cores.
	LineTransfers int64 `json:"line_transfers"`
	// HeadBlocked counts pulls that found a shard's head not allowed on
	// the pulling CPU, so that shard yielded nothing (v3's head-only pop).
	HeadBlocked int64 `json:"head_blocked"`
}

// SharedRunq returns the shared-runqueue counters.
func (s *Sim) SharedRunq() SharedRunqStats {
	st := &s.stats
	return SharedRunqStats{Pushes: st.srqPushes, Pops: st.srqPops, LockAcquisitions: st.srqLockAcq,
		LockWaitNS: st.srqLockWaitNS, LockHoldNS: st.srqLockHoldNS,
		ContendedHolds: st.srqContended, LineTransfers: st.srqLineXfers, HeadBlocked: st.srqHeadBlocked}
}
