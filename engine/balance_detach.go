package engine

import (
	"slices"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// detachTasks is v5.2's detach_tasks followed by attach_tasks: walk the
// source's cfs_tasks list from the tail (least recently enqueued or run),
// at most loop_max entries (the running task is on the list too and uses
// up one), moving tasks that can_migrate_task allows until env.imbalance
// worth of load has moved. A task whose load is more than twice what is
// left to move is skipped. Skipped tasks go to the head of the list. It
// returns the number of tasks moved to env.dst.
func (s *Sim) detachTasks(env *lbEnv) int {
	src := env.src
	if env.imbalance <= 0 {
		return 0
	}
	cands := s.sortedCands(src)
	detached := s.lb.detached[:0]
	for i := 0; i < len(cands); {
		p := cands[i]
		// Never empty the source from an idle CPU: it would be treated
		// likewise, which could livelock.
		if env.idle != cpuNotIdle && src.nrRunning() <= 1 {
			break
		}
		env.loop++
		if env.loop > env.loopMax {
			break
		}
		if env.loop > env.loopBreak {
			// LBF_NEED_BREAK: the kernel drops the lock, attaches
			// what it has and comes back to the same task; nothing
			// else runs meanwhile here, only the count moves on.
			env.loopBreak += nrMigrateBreak
			continue
		}
		i++
		if !s.canMigrateTask(p, env) {
			s.cfsListAdd(p)
			continue
		}
		// task_h_load: without task groups, the task's PELT load.
		// (LB_MIN, which would skip tiny tasks, is off in v5.2.)
		load := p.load.at(s.now)
		if load/2 > env.imbalance {
			s.cfsListAdd(p)
			continue
		}
		s.detachQueued(src, p, env.dst)
		detached = append(detached, p)
		env.imbalance -= load
		// (CONFIG_PREEMPT kernels stop a newly idle pass after one
		// task; the distribution kernels of 2019 are PREEMPT_VOLUNTARY.)
		if env.imbalance <= 0 {
			break
		}
	}
	// attach_tasks: env->tasks is filled at its head, so the last task
	// detached is attached first.
	for i := len(detached) - 1; i >= 0; i-- {
		p := detached[i]
		s.attachQueued(env.dst, p, env.dst)
		if env.idle != cpuNewlyIdle {
			s.wakeForPulledAt(env.dst, p, env.payer, env.at)
		}
	}
	n := len(detached)
	clear(cands)
	clear(detached)
	s.lb.cands, s.lb.detached = cands[:0], detached[:0]
	return n
}

// sortedCands is src's cfs_tasks list, the running task included, from its
// tail (least recently enqueued or run) to its head, in scratch space.
func (s *Sim) sortedCands(src *cpu) []*Task {
	cands := append(s.lb.cands[:0], src.tree...)
	if src.curr != nil && src.curr.state == TaskRunning {
		cands = append(cands, src.curr)
	}
	slices.SortFunc(cands, func(a, b *Task) int {
		if a.cfsSeq != b.cfsSeq {
			if a.cfsSeq < b.cfsSeq {
				return -1
			}
			return 1
		}
		return int(a.ID - b.ID)
	})
	return cands
}

// canMigrateTask is can_migrate_task: p may move to env.dst if it is
// allowed there, not running, and not cache hot — or hot but the level
// has failed more than cache_nice_tries times. A task pinned away from
// dst sets LBF_SOME_PINNED and, on periodic passes, offers another CPU of
// the local group (LBF_DST_PINNED, new_dst_cpu); any task allowed on dst
// (even the running one) clears LBF_ALL_PINNED. Where the era's rules say
// so (v5.12 on), a per-CPU kthread stays before any of this; task_hot is
// the era's.
func (s *Sim) canMigrateTask(p *Task, env *lbEnv) bool {
	if s.fair.perCPUKthreadStays && p.Kthread() && p.nrAllowed == 1 {
		return false // kthread_is_per_cpu
	}
	if !p.allowed.Test(env.dst.id) {
		env.flags |= lbfSomePinned
		if env.idle == cpuNewlyIdle || env.flags&lbfDstPinned != 0 {
			return false
		}
		g := env.dstGrp
		for id := g.First(); id >= 0; id = g.Next(id + 1) {
			if env.cpus.Test(id) && p.allowed.Test(id) {
				env.flags |= lbfDstPinned
				env.newDst = id
				break
			}
		}
		return false
	}
	env.flags &^= lbfAllPinned
	if p.state == TaskRunning {
		return false
	}
	// Aggressive migration if the destination is the preferred NUMA
	// node, the task is cache cold, or too many attempts have failed.
	hot := s.migrateDegradesLocality(p, env)
	if hot < 0 {
		hot = 0
		if s.taskHot(p, env) {
			hot = 1
		}
	}
	if hot <= 0 || env.ds.nrBalanceFailed > env.sd.CacheNiceTries {
		return true
	}
	s.stats.lbHotSkipped++
	return false
}

// taskHot is task_hot: a buddy of its runqueue is hot when the
// destination has work (CACHE_HOT_BUDDY; era 6.6's EEVDF sets no last
// buddy), otherwise a task that ran within sysctl_sched_migration_cost.
// Where the era's rules say SMT siblings share their caches (6.1, 6.6:
// SD_SHARE_CPUCAPACITY returns 0), no task is hot between them; v5.2 makes
// no such exception, so at SMT level too a hot task waits for
// cache_nice_tries (0 there) failed passes.
func (s *Sim) taskHot(p *Task, env *lbEnv) bool {
	if s.fair.smtCacheCold && env.sd.Level == machine.LevelSMT {
		return false
	}
	if env.dst.nr > 0 && (p == env.src.nextBuddy || p == env.src.lastBuddy) {
		return true
	}
	mc := s.k.Get(knob.SchedMigrationCost)
	if mc == 0 {
		return false
	}
	return s.now-p.execStart < mc
}

// migrateDegradesLocality is v5.2's migrate_degrades_locality at a NUMA
// level: 1 (treat as hot) when p would leave its preferred node while its
// source runs some task away from its own preferred node, 0 (move it,
// even if cache hot) when p would reach its preferred node, -1 (let
// task_hot decide) otherwise. A task's preferred node is where its memory
// is (NUMA balancing's view, numa.go); the fault-weight comparison for
// moves between two other nodes finds no faults on either (all of a
// task's memory is on one node) and says 0.
func (s *Sim) migrateDegradesLocality(p *Task, env *lbEnv) int {
	if !s.numaTask(p) || env.sd.Level != machine.LevelNUMA {
		return -1
	}
	srcNid, dstNid := s.topo.Socket[env.src.id], s.topo.Socket[env.dst.id]
	if srcNid == dstNid {
		return -1
	}
	if srcNid == p.memNode {
		if _, preferred := s.numaRunning(env.src); env.src.nr > preferred {
			return 1
		}
		return -1
	}
	if dstNid == p.memNode {
		return 0
	}
	if env.idle == cpuIdle {
		return -1 // leaving a core idle is often worse
	}
	return 0
}
