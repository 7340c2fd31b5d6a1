package engine

import "schedplay/engine/knob"

// SHARED_RUNQ (David Vernet, 2023; kernel-reference.md §5): a per-LLC FIFO
// of runnable tasks split into shards of shard_size CPUs, each behind its
// own spinlock. "wakeup" pushes a task woken on its previous CPU (v1:
// wakees select_task_rq already moved found their CPU); "all" pushes every
// runnable, non-running task when it is queued (v3). A task leaves the list
// when it runs anywhere or is migrated. A CPU about to go idle pops the
// first task allowed on it from its own shard, then from the others in
// turn, before normal newly-idle balancing (which then skips the LLC).
// Pinned tasks never enter the list.
//
// Each shard lock is a simulated resource: an acquisition waits until the
// lock is free (spinning — the CPU pays the wait) and then holds it for
// srq_lock_ns, so contention on big shards shows up as lost CPU time.

type srqShard struct {
	list   []*Task
	freeAt int64
}

// srqShards returns the shards of llc, creating them on first use:
// ceil(llc_size / shard_size) shards.
func (s *Sim) srqShards(llc int) []srqShard {
	if s.srq == nil {
		s.srq = make([][]srqShard, s.topo.NLLC)
	}
	if s.srq[llc] == nil {
		size := int64(s.topo.LLCSpan[llc].Weight())
		per := s.k.Get(knob.ShardSize)
		s.srq[llc] = make([]srqShard, (size+per-1)/per)
	}
	return s.srq[llc]
}

// srqShardIndex is the v3 patch's shard of cpu: (cpu >> 1) % nr_shards,
// meant to keep SMT pairs together (which it does only where siblings have
// adjacent numbers, not on interleaved x86/AMD numbering).
func (s *Sim) srqShardIndex(cpu int) int {
	return (cpu >> 1) % len(s.srqShards(s.topo.LLC[cpu]))
}

// srqLock acquires and releases a shard lock for one operation at the
// current time and returns the CPU time it cost (spin wait + hold).
func (s *Sim) srqLock(sh *srqShard) int64 {
	start := max(s.now, sh.freeAt)
	wait := start - s.now
	hold := s.k.Get(knob.SRQLockNS)
	sh.freeAt = start + hold
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
	if t.srqShard >= 0 || t.allowed.Weight() == 1 {
		return
	}
	llc := s.topo.LLC[t.cpu]
	idx := s.srqShardIndex(t.cpu)
	sh := &s.srqShards(llc)[idx]
	s.charge(payer, s.srqLock(sh))
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
	s.charge(payer, s.srqLock(sh))
	for i, x := range sh.list {
		if x == t {
			copy(sh.list[i:], sh.list[i+1:])
			sh.list[len(sh.list)-1] = nil
			sh.list = sh.list[:len(sh.list)-1]
			break
		}
	}
	t.srqShard = -1
}

// srqPop is the newly idle pull: the first task allowed on c from c's own
// shard, then the other shards of its LLC in turn. The task is migrated to
// c's runqueue.
func (s *Sim) srqPop(c *cpu) *Task {
	llc := s.topo.LLC[c.id]
	shards := s.srqShards(llc)
	own := s.srqShardIndex(c.id)
	for k := range shards {
		sh := &shards[(own+k)%len(shards)]
		if len(sh.list) == 0 {
			// An empty list is seen without the lock (one cache-line read).
			s.charge(c, s.k.Get(knob.ProbeNS))
			continue
		}
		s.charge(c, s.srqLock(sh))
		for i, t := range sh.list {
			if !t.allowed.Test(c.id) || t.state != TaskRunnable {
				continue
			}
			copy(sh.list[i:], sh.list[i+1:])
			sh.list[len(sh.list)-1] = nil
			sh.list = sh.list[:len(sh.list)-1]
			t.srqShard = -1
			src := s.cpus[t.cpu]
			s.detachQueued(src, t, c)
			s.attachQueued(c, t, c)
			s.stats.srqPops++
			return t
		}
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
}

// SharedRunq returns the shared-runqueue counters.
func (s *Sim) SharedRunq() SharedRunqStats {
	st := &s.stats
	return SharedRunqStats{Pushes: st.srqPushes, Pops: st.srqPops, LockAcquisitions: st.srqLockAcq,
		LockWaitNS: st.srqLockWaitNS, LockHoldNS: st.srqLockHoldNS}
}
