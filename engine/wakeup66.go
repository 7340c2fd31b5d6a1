package engine

import (
	"math"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// The wakeup path of era 6.6 (kernel/sched/fair.c at v6.6, read at the
// 6.6.57 stable tag): select_task_rq_fair, wake_affine, select_idle_sibling,
// select_idle_cpu with select_idle_core folded into its scan, and
// select_idle_smt as brought back in 2021 (v5.16: the idle siblings of prev
// when the LLC has no idle core). eevdfV66.selectTaskRq runs them
// through wakeup.go's selectTaskRqFair.
//
// What changed since v5.2, as modelled:
//   - recent_used_cpu: select_idle_sibling sets p->recent_used_cpu = prev
//     on every pass that reaches it (v5.13), and select_task_rq_fair no
//     longer stores the waker's CPU in current->recent_used_cpu.
//   - a per-CPU kthread waking a task whose prev is the kthread's CPU, with
//     at most one task running there, stacks the wakee on prev (v5.10; the
//     engine reports it as stage "prev").
//   - has_idle_cores is read once: if set, select_idle_cpu scans core by
//     core (select_idle_core) with no depth limit, remembering the first
//     idle thread it meets, and clears the hint if no whole core is idle;
//     if clear, select_idle_smt first tries prev's siblings (when prev
//     shares the target's LLC), then select_idle_cpu scans CPU by CPU with
//     the SIS_UTIL (or SIS_PROP) depth.
//   - SIS_UTIL is on and SIS_PROP off by default; SIS_PROP, if switched on,
//     budgets with rq->wake_avg_idle (half of avg_idle at each wakeup of an
//     idle CPU, halved every jiffy, reduced by the scan time), not avg_idle.
//   - wake_affine_idle also returns prev when prev is idle; wake_affine_weight
//     compares cpu_load() (the runqueue's load_avg, blocked load included)
//     instead of v5.2's runnable_load_avg.
// Not modelled: asymmetric CPU capacity (select_idle_capacity), energy-aware
// placement, SCHED_IDLE CPUs (sched_idle_cpu), core scheduling cookies,
// WF_CURRENT_CPU, cluster domains.

// selectIdleSibling66 is select_idle_sibling of v6.6 (symmetric capacity).
func (s *Sim) selectIdleSibling66(p *Task, prev, target int, cur *Task, d *Decision) (int, Stage) {
	if s.probe(target) {
		return target, StageTarget
	}
	if prev != target && s.topo.ShareCache(prev, target) && s.probe(prev) {
		return prev, StagePrev
	}
	// A per-CPU kthread (in task context, not an interrupt) that woke a
	// task last run on its own CPU, where nothing else runs: stack them.
	this := d.WakerCPU
	if cur.ID >= 0 && cur.Kthread() && cur.nrAllowed == 1 && prev == this && s.cpus[this].nr <= 1 {
		return prev, StagePrev
	}
	r := p.recentUsedCPU
	p.recentUsedCPU = prev
	if r >= 0 && r != prev && r != target && s.topo.ShareCache(r, target) && s.probe(r) && p.allowed.Test(r) {
		return r, StageRecent
	}
	li := s.topo.LLCDomainIdx[target]
	if li < 0 {
		return target, StageNoLLC
	}
	llc := s.topo.Domains[target][li]
	hasIdleCore := false
	if s.smtPresent {
		hasIdleCore = s.k.On(knob.SIS_CORE) && s.llcs[s.topo.LLC[target]].hasIdleCores
		if !hasIdleCore && s.topo.ShareCache(prev, target) {
			if c := s.selectIdleSMT66(p, llc, prev); c >= 0 {
				return c, StageIdleSMT
			}
		}
	}
	if c, st := s.sisIdleCPU66(p, llc, hasIdleCore, prev, target, cur, d); c >= 0 {
		return c, st
	}
	return target, StageBusyTarget
}

// selectIdleSMT66 is select_idle_smt of v5.16+: an idle allowed sibling of
// cpu (prev, in select_idle_sibling) other than cpu itself, within the LLC.
func (s *Sim) selectIdleSMT66(p *Task, llc *machine.Domain, cpu int) int {
	for _, c := range s.topo.CoreCPUs[s.topo.Core[cpu]] {
		if c == cpu || !p.allowed.Test(c) || !llc.Span.Test(c) {
			continue
		}
		if s.probe(c) {
			return c
		}
	}
	return -1
}

// selectIdleCPU66 is select_idle_cpu of v6.6. It returns the CPU found and
// the stage to report: a whole idle core (select_idle_core), or an idle CPU.
//
// prev and cur (the waker) are only for a policy's select_idle_core
// (corehook.go), which runs in place of the loop's select_idle_core.
func (s *Sim) selectIdleCPU66(p *Task, llc *machine.Domain, hasIdleCore bool, prev, target int, cur *Task, d *Decision) (int, Stage) {
	this := d.WakerCPU
	wc := s.cpus[this]
	cpus := s.scanMask
	cpus.And(llc.Span, p.allowed)
	nr := int64(math.MaxInt32)
	prop := false
	if s.k.On(knob.SIS_PROP) && !hasIdleCore {
		if s.topo.LLCDomainIdx[this] < 0 {
			return -1, StageBusyTarget
		}
		prop = true
		// "If we're busy, the assumption that the last idle period
		// predicts the future is flawed": halve wake_avg_idle per jiffy.
		now := s.now / s.tickNS
		for wc.wakeStamp < now && wc.wakeAvgIdle > 0 {
			wc.wakeStamp++
			wc.wakeAvgIdle >>= 1
		}
		if wc.wakeStamp < now {
			wc.wakeStamp = now
		}
		avgCost := wc.avgScanCost + 1
		spanAvg := int64(llc.Span.Weight()) * wc.wakeAvgIdle
		if spanAvg > 4*avgCost {
			nr = spanAvg / avgCost
		} else {
			nr = 4
		}
	}
	if s.k.On(knob.SIS_UTIL) {
		nr = s.llcs[s.topo.LLC[target]].nrIdleScan + 1
		if nr == 1 {
			d.SISLimit = 1
			return -1, StageBusyTarget // the LLC is judged overloaded
		}
	}
	d.SISCalled = true
	if !hasIdleCore {
		d.SISLimit = int(min(nr, math.MaxInt32))
	}
	scanStart := s.scanCost
	idleCPU := -1
	probes := 0
	it := cpus.IterWrap(target + 1)
	for c, ok := it.Next(); ok; c, ok = it.Next() {
		if hasIdleCore && s.corePolicy != nil {
			from := len(s.probeBuf)
			i, good := s.policySelectIdleCore(p, prev, target, c, &idleCPU, cur, d)
			probes += len(s.probeBuf) - from
			if !good || i >= 0 {
				d.SISProbes = probes
				if !good {
					return -1, StageBusyTarget // the run stops after this wakeup
				}
				return i, StageIdleCore
			}
			// As the kernel's select_idle_core does before it returns -1.
			for _, t := range s.topo.CoreCPUs[s.topo.Core[c]] {
				cpus.Clear(t)
			}
			continue
		}
		if hasIdleCore {
			// select_idle_core: every thread of c's core; the first idle
			// allowed one is remembered in case no whole core is idle.
			idle := true
			for _, t := range s.topo.CoreCPUs[s.topo.Core[c]] {
				probes++
				if !s.probe(t) {
					idle = false
					if idleCPU == -1 {
						continue
					}
					break
				}
				if idleCPU == -1 && cpus.Test(t) {
					idleCPU = t
				}
			}
			if idle {
				d.SISProbes = probes
				return c, StageIdleCore
			}
			for _, t := range s.topo.CoreCPUs[s.topo.Core[c]] {
				cpus.Clear(t)
			}
			continue
		}
		nr--
		if nr == 0 {
			d.SISProbes, d.SISCutShort = probes, true
			// The kernel returns before its SIS_PROP bookkeeping.
			return -1, StageBusyTarget
		}
		probes++
		if s.probe(c) {
			idleCPU = c
			break
		}
	}
	d.SISProbes = probes
	if hasIdleCore {
		s.llcs[s.topo.LLC[target]].hasIdleCores = false
		s.stats.idleCoreCleared++
	}
	if prop {
		t := s.scanCost - scanStart
		wc.wakeAvgIdle -= min(wc.wakeAvgIdle, t)
		wc.avgScanCost += (t - wc.avgScanCost) / 8
	}
	return idleCPU, StageIdleCPU
}
